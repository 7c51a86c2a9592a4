#include "engine/journal.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "engine/campaign_limits.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "generators/program_gen.h"
#include "impl_backend/planted_faults.h"
#include "judge/trace_json.h"
#include "oracle/torch_backend.h"
#include "program/json.h"
#include "program/json_text.h"
#include "program/types.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/json_fields.h"

namespace parity::engine {

namespace {

using nlohmann::json;
constexpr std::string_view kWhat = "campaign journal";

json optional_json(const auto& v) { return v ? json(*v) : json(nullptr); }

// The ops and dtypes a campaign's programs may use, by name; null for every one.
json selection_to_json(const generators::Selection& s) {
  if (s.everything()) return nullptr;
  json ops = json::array(), dtypes = json::array();
  for (const program::OpSpec& op : program::op_table())
    if (s.ops.empty() || s.ops[static_cast<std::size_t>(op.id)]) ops.push_back(op.name);
  for (program::DType d : program::kAllDTypes)
    if (s.dtypes.empty() || std::find(s.dtypes.begin(), s.dtypes.end(), d) != s.dtypes.end())
      dtypes.push_back(program::to_string(d));
  return {{"ops", ops}, {"dtypes", dtypes}};
}

generators::Selection selection_from_json(const json& j, const std::string& what) {
  generators::Selection s;
  if (j.is_null()) return s;
  s.ops.assign(program::op_table().size(), false);
  for (const auto& name : reports::json_typed<std::vector<std::string>>(j, "ops", what)) {
    const auto op = program::find_op(name);
    if (!op) throw program::JsonError(what + ": the selection names op \"" + name + "\", which this parity does not know");
    s.ops[static_cast<std::size_t>(*op)] = true;
  }
  for (const auto& name : reports::json_typed<std::vector<std::string>>(j, "dtypes", what)) {
    const auto d = program::parse_dtype(name);
    if (!d) throw program::JsonError(what + ": the selection names dtype \"" + name + "\", which this parity does not know");
    s.dtypes.push_back(*d);
  }
  return s;
}

json config_to_json(const CampaignConfig& c) {
  return {{"seed", program::uint64_to_json(c.seed)},
          {"cases", c.cases ? program::uint64_to_json(*c.cases) : json(nullptr)},
          {"seconds", optional_json(c.seconds)},
          {"max_findings", c.max_findings ? program::uint64_to_json(*c.max_findings) : json(nullptr)},
          {"max_steps", c.generator.max_steps},
          {"invalid_share", c.generator.invalid_share},
          {"swarm_share", c.generator.swarm_share},
          {"cuda", c.generator.cuda},
          {"oracle", reports::to_string(c.oracle)},
          {"timeout_ms", c.timeout.count()},
          {"isolation", reports::to_string(c.isolation)},
          {"jobs", c.jobs},
          {"memory_limit_mb", c.memory_limit_bytes >> 20},
          {"shrink_share", c.shrink_share},
          {"confirm_runs", c.confirm_runs},
          {"shard", {{"index", c.shard.index}, {"total", c.shard.total}}},
          {"known", c.known_file ? json(c.known_file->string()) : json(nullptr)},
          {"impl_cmd", c.sides.impl_cmd},
          {"oracle_cmd", c.sides.oracle_cmd},
          {"backend_start_ms", c.sides.start_timeout.count()},
          {"selection", selection_to_json(c.generator.selection)},
          {"guided_share", c.guided_share},
          {"corpus", c.corpus_dir ? json(c.corpus_dir->string()) : json(nullptr)}};
}

CampaignConfig config_from_json(const json& j) {
  using reports::json_typed;
  const std::string what = std::string(kWhat) + ": campaign";
  CampaignConfig c;
  c.seed = reports::json_u64(j, "seed", what);
  if (!reports::json_field(j, "cases", what).is_null()) c.cases = reports::json_u64(j, "cases", what);
  if (!reports::json_field(j, "seconds", what).is_null()) c.seconds = json_typed<double>(j, "seconds", what);
  if (j.contains("max_findings") && !j.at("max_findings").is_null())
    c.max_findings = reports::json_u64(j, "max_findings", what);
  c.generator.max_steps = json_typed<int>(j, "max_steps", what);
  c.generator.invalid_share = json_typed<double>(j, "invalid_share", what);
  c.generator.swarm_share = json_typed<double>(j, "swarm_share", what);
  // Journals of campaigns from before devices existed ran on the CPU.
  c.generator.cuda = j.contains("cuda") && json_typed<bool>(j, "cuda", what);
  c.oracle = reports::oracle_field(j, what);  // absent from journals from before impl-cpu: LibTorch
  c.timeout = std::chrono::milliseconds(json_typed<std::int64_t>(j, "timeout_ms", what));
  const auto isolation = reports::parse_isolation(json_typed<std::string>(j, "isolation", what));
  if (!isolation) throw program::JsonError(what + ": field \"isolation\" names no isolation parity knows");
  c.isolation = *isolation;
  c.jobs = json_typed<int>(j, "jobs", what);
  // Past the range, saturated rather than shifted out: out_of_range_settings then names it.
  const auto memory_mb = json_typed<std::uint64_t>(j, "memory_limit_mb", what);
  c.memory_limit_bytes = memory_mb > kMemoryMbRange.max ? SIZE_MAX : static_cast<std::size_t>(memory_mb) << 20;
  c.shrink_share = json_typed<double>(j, "shrink_share", what);
  c.confirm_runs = json_typed<int>(j, "confirm_runs", what);
  // Journals from before protocol backends: both sides in-process, every op.
  if (j.contains("impl_cmd")) c.sides.impl_cmd = json_typed<std::string>(j, "impl_cmd", what);
  if (j.contains("oracle_cmd")) c.sides.oracle_cmd = json_typed<std::string>(j, "oracle_cmd", what);
  if (j.contains("backend_start_ms"))
    c.sides.start_timeout = std::chrono::milliseconds(json_typed<std::int64_t>(j, "backend_start_ms", what));
  if (j.contains("selection")) c.generator.selection = selection_from_json(j.at("selection"), what + ".selection");
  const json& shard = reports::json_field(j, "shard", what);
  c.shard.index = json_typed<int>(shard, "index", what + ".shard");
  c.shard.total = json_typed<int>(shard, "total", what + ".shard");
  if (c.shard.total < 1 || c.shard.total > reports::kMaxShards || c.shard.index < 0 || c.shard.index >= c.shard.total)
    throw program::JsonError(what + ": shard " + std::to_string(c.shard.index) + "/" + std::to_string(c.shard.total) +
                             " is no shard a campaign runs");
  // Journals from before coverage guidance ran without it.
  c.guided_share = j.contains("guided_share") ? json_typed<double>(j, "guided_share", what) : 0.0;
  if (j.contains("corpus") && !j.at("corpus").is_null()) c.corpus_dir = json_typed<std::string>(j, "corpus", what);
  const json& k = reports::json_field(j, "known", what);
  if (!k.is_null()) c.known_file = json_typed<std::string>(j, "known", what);
  return c;
}

// The summary's fields that record a setting (record_settings), compared as run.json writes them.
constexpr const char* kSettingFields[] = {"seed",     "shard",           "budget",   "max_steps", "timeout_ms",
                                          "isolation", "memory_limit_mb", "device", "oracle"};

// Why `j` cannot be what a campaign wrote: one line per field, empty when it can be. Its settings are held to
// what parity fuzz's flags accept, its summary to its settings and to its own counts, and its position (next_case,
// the pending finding's case) to its shard and budget.
std::vector<std::string> journal_problems(const Journal& j) {
  std::vector<std::string> out = out_of_range_settings(j.config);
  const reports::ShardInfo& shard = j.config.shard;
  const auto total = static_cast<std::uint64_t>(shard.total), index = static_cast<std::uint64_t>(shard.index);
  const std::string shard_text = std::to_string(shard.index) + "/" + std::to_string(shard.total);
  if (j.next_case % total != index)
    out.push_back("next_case " + std::to_string(j.next_case) + " is not a case of shard " + shard_text);
  if (j.config.cases && reports::cases_in_shard(j.next_case, shard) > reports::cases_in_shard(*j.config.cases, shard))
    out.push_back("next_case " + std::to_string(j.next_case) + " is past campaign.cases " +
                  std::to_string(*j.config.cases));
  if (const std::uint64_t judged = reports::cases_in_shard(j.next_case, shard); j.summary.cases != judged)
    out.push_back("summary.cases is " + std::to_string(j.summary.cases) + ", but the shard's cases below next_case " +
                  std::to_string(j.next_case) + " are " + std::to_string(judged));
  if (!(j.elapsed >= 0 && j.elapsed <= 1e12)) out.push_back("elapsed is no number of seconds");
  reports::RunSummary settings = j.summary;
  record_settings(j.config, settings);
  const json have = reports::to_json(j.summary), want = reports::to_json(settings);
  for (const char* field : kSettingFields)
    if (have.at(field) != want.at(field))
      out.push_back(std::string("summary.") + field + " is " + have.at(field).dump() + ", but the campaign's is " +
                    want.at(field).dump());
  if (const json& share = have.at("guidance").at("share"); share != want.at("guidance").at("share"))
    out.push_back("summary.guidance.share is " + share.dump() + ", but campaign.guided_share is " +
                  want.at("guidance").at("share").dump());
  for (const std::string& p : reports::count_problems(j.summary)) out.push_back("summary." + p);
  if (j.pending) {
    // Recorded while its case was judged: the case just below next_case, of this campaign's seed.
    if (j.next_case < total || j.pending->case_index != j.next_case - total)
      out.push_back("pending.case_index " + std::to_string(j.pending->case_index) + " is not the case judged last (" +
                    (j.next_case < total ? std::string("none was") : std::to_string(j.next_case - total)) + ")");
    if (j.pending->seed != j.config.seed)
      out.push_back("pending.seed " + std::to_string(j.pending->seed) + " is not campaign.seed " +
                    std::to_string(j.config.seed));
  }
  return out;
}

}  // namespace

void write_journal(const std::filesystem::path& dir, const Journal& journal) {
  const json j = {{"journal_version", kJournalVersion},
                  {"campaign", config_to_json(journal.config)},
                  {"next_case", program::uint64_to_json(journal.next_case)},
                  {"elapsed", journal.elapsed},
                  {"summary", reports::to_json(journal.summary)},
                  {"pending", journal.pending ? reports::to_json(*journal.pending) : json(nullptr)}};
  files::write_text_file_atomically(dir / kJournalFile, j.dump(), "the campaign journal");
}

Journal read_journal(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kJournalFile;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    throw reports::ReportError(path.string() + ": no journal, so nothing to resume: the campaign in " +
                               dir.string() + " finished (see its run.json), or was not started by parity fuzz");
  const json j = program::parse_json_text(files::read_text_file(path), path.string());  // names the file
  try {
    using reports::json_typed;
    const auto version = json_typed<int>(j, "journal_version", kWhat);
    if (version != kJournalVersion)
      throw program::JsonError(std::string(kWhat) + ": journal_version " + std::to_string(version) +
                               " is not the one this parity writes (" + std::to_string(kJournalVersion) +
                               "): resume it with the parity that started it");
    Journal out;
    out.config = config_from_json(reports::json_field(j, "campaign", kWhat));
    out.config.out = dir;
    out.next_case = reports::json_u64(j, "next_case", kWhat);
    out.elapsed = json_typed<double>(j, "elapsed", kWhat);
    out.summary = reports::run_summary_from_json(reports::json_field(j, "summary", kWhat));
    if (const json& p = reports::json_field(j, "pending", kWhat); !p.is_null())
      out.pending = reports::finding_from_json(p);
    if (const auto problems = journal_problems(out); !problems.empty()) {
      throw program::JsonError("not the journal of a campaign parity ran, so it cannot be resumed (edited, or "
                               "damaged): " + program::join(problems, "; "));
    }
    return out;
  } catch (const program::JsonError& e) {
    throw reports::ReportError(path.string() + ": " + e.what());
  }
}

void remove_journal(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::remove(dir / kJournalFile, ec);
  if (ec) throw reports::ReportError((dir / kJournalFile).string() + ": cannot remove it: " + ec.message());
}

std::vector<std::string> resume_mismatches(const Journal& j) {
  reports::RunSummary mine;
  mine.libtorch_version = oracle::torch_version();
  mine.parity_commit = std::string(reports::parity_commit());
  mine.generator_version = generators::generator_version();
  mine.planted_faults = impl_backend::planted_fault_texts();
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& theirs, const std::string& ours) {
    if (theirs != ours) out.push_back(what + ": the campaign's is " + theirs + ", this parity's is " + ours);
  };
  const reports::RunSummary& s = j.summary;
  differ("LibTorch", s.libtorch_version, mine.libtorch_version);
  differ("parity commit", s.parity_commit, mine.parity_commit);
  differ("generator version", std::to_string(s.generator_version), std::to_string(mine.generator_version));
  auto joined = [](const std::vector<std::string>& v) {
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : ",") + x;
    return t.empty() ? std::string("none") : t;
  };
  differ("planted faults (PARITY_PLANT)", joined(s.planted_faults), joined(mine.planted_faults));
  return out;
}

}  // namespace parity::engine
