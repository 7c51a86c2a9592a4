#include "engine/corpus.h"

#include <algorithm>
#include <cstdio>

#include "engine/case_seed.h"
#include "files/error.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "generators/mutate.h"
#include "generators/program_state.h"
#include "generators/rng.h"
#include "generators/selection.h"
#include "program/json.h"
#include "program/json_text.h"
#include "reports/error.h"
#include "reports/json_fields.h"
#include "reports/jsonl.h"

namespace parity::engine {

using program::Program;

namespace {

// Case k's draws for guidance are a stream of their own, apart from the generator's.
constexpr std::uint64_t kGuidanceSalt = 0x6a09e667f3bcc909ULL;
constexpr int kTournament = 8;  // draws, of which the shortest is mutated

// What the campaign can run of a program: nothing on a device it does not draw, only the selected ops.
std::optional<Program> runnable(Program p, const generators::GenConfig& config) {
  if (!config.cuda && program::uses_cuda(p)) return std::nullopt;
  if (!config.selection.everything()) p = generators::select_steps(p, config.selection);
  if (p.steps.empty()) return std::nullopt;
  return p;
}

// FNV-1a of the program's JSON text: a file name that is the same for the same program on every machine.
std::string file_name_of(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char name[24];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h));
  return std::string(name) + ".json";
}

Program program_in(const nlohmann::json& j, const std::string& origin) {
  try {
    Program p = program::program_from_json(j);
    std::string why;
    if (!generators::well_formed(p, &why)) throw program::JsonError(why);
    return p;
  } catch (const program::JsonError& e) {
    throw reports::ReportError(origin + ": not a program parity can run: " + e.what());
  }
}

}  // namespace

Corpus::Corpus(std::vector<Program> loaded, reports::ShardInfo shard, double guided_share,
               generators::GenConfig config)
    : loaded_(std::move(loaded)), shard_(shard), share_(guided_share), config_(std::move(config)) {
  for (std::size_t j = 0; j < loaded_.size(); ++j)
    if (j % static_cast<std::size_t>(shard_.total) == static_cast<std::size_t>(shard_.index))
      regressions_.push_back(loaded_[j]);
}

std::uint64_t corpus_lag(std::uint64_t ordinal) { return std::clamp<std::uint64_t>(ordinal / 2, 1, kCorpusLag); }

std::uint64_t Corpus::lag_before(std::uint64_t k) const {
  const auto total = static_cast<std::uint64_t>(shard_.total);
  return corpus_lag(k / total) * total;
}

std::size_t Corpus::visible_to(std::uint64_t k) const {
  const std::uint64_t lag = lag_before(k);
  const auto old_enough = std::partition_point(entries_.begin(), entries_.end(),
                                               [&](const Entry& e) { return e.added_by + lag <= k; });
  return loaded_.size() + static_cast<std::size_t>(old_enough - entries_.begin());
}

std::optional<PlannedCase> Corpus::plan(std::uint64_t seed, std::uint64_t k) const {
  const std::uint64_t ordinal = k / static_cast<std::uint64_t>(shard_.total);
  if (ordinal < regressions_.size()) return PlannedCase{regressions_[ordinal], reports::CaseOrigin::Corpus};
  if (share_ <= 0) return std::nullopt;
  const std::size_t visible = visible_to(k);
  generators::Rng rng(case_seed(seed, k) ^ kGuidanceSalt);
  if (visible == 0 || !rng.chance(share_)) return std::nullopt;
  const std::size_t recent = std::min(visible, kRecentEntries);
  auto draw = [&] {
    return static_cast<std::size_t>(rng.chance(0.5) ? rng.below(static_cast<std::int64_t>(visible))
                                                    : static_cast<std::int64_t>(visible - recent) +
                                                          rng.below(static_cast<std::int64_t>(recent)));
  };
  auto entry = [&](std::size_t at) -> const Program& {
    return at < loaded_.size() ? loaded_[at] : entries_[at - loaded_.size()].program;
  };
  // The shortest of kTournament draws: a case costs more than its length (every step observes every live value),
  // and what a long program reached a short one often reaches too (AFL favours small, fast entries likewise).
  const Program* parent = &entry(draw());
  for (int i = 1; i < kTournament; ++i)
    if (const Program& other = entry(draw()); other.steps.size() < parent->steps.size()) parent = &other;
  auto mutant = generators::mutate(*parent, rng, config_);
  if (!mutant) return std::nullopt;
  if (auto p = runnable(std::move(*mutant), config_)) return PlannedCase{std::move(*p), reports::CaseOrigin::Mutated};
  return std::nullopt;
}

bool Corpus::may_start(std::uint64_t k, std::uint64_t next_to_judge) const {
  return share_ <= 0 || next_to_judge + lag_before(k) > k;
}

void Corpus::add(std::uint64_t k, Program p) { entries_.push_back({k, std::move(p)}); }

std::vector<Program> Corpus::added() const {
  std::vector<Program> out;
  for (const Entry& e : entries_) out.push_back(e.program);
  return out;
}

std::vector<nlohmann::json> Corpus::take_log_lines() {
  std::vector<nlohmann::json> out;
  if (!loaded_logged_)
    for (const Program& p : loaded_) out.push_back({{"case", nullptr}, {"program", program::to_json(p)}});
  loaded_logged_ = true;
  for (; logged_ < entries_.size(); ++logged_)
    out.push_back({{"case", program::uint64_to_json(entries_[logged_].added_by)},
                   {"program", program::to_json(entries_[logged_].program)}});
  return out;
}

Corpus Corpus::restore(const std::filesystem::path& log, std::uint64_t next_case, reports::ShardInfo shard,
                       double guided_share, generators::GenConfig config) {
  std::vector<Program> loaded;
  std::vector<Entry> entries;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(log, ec))) {
    const reports::JsonlContents contents = reports::read_jsonl(log);
    for (std::size_t i = 0; i < contents.records.size(); ++i) {
      const nlohmann::json& r = contents.records[i];
      const std::string where = log.string() + ":" + std::to_string(contents.lines[i]);
      if (!r.is_object() || !r.contains("case") || !r.contains("program"))
        throw reports::ReportError(where + ": not a corpus line (\"case\" and \"program\")");
      Program p = program_in(r.at("program"), where);
      if (r.at("case").is_null()) {
        loaded.push_back(std::move(p));
        continue;
      }
      std::uint64_t k = 0;
      try {
        k = reports::json_u64(r, "case", where);
      } catch (const program::JsonError& e) {
        throw reports::ReportError(e.what());
      }
      // A line of a case judged again after a kill repeats the first; lines past next_case are judged again.
      if (k < next_case && (entries.empty() || entries.back().added_by < k)) entries.push_back({k, std::move(p)});
    }
  }
  Corpus c(std::move(loaded), shard, guided_share, std::move(config));
  c.entries_ = std::move(entries);
  c.loaded_logged_ = true;
  c.logged_ = c.entries_.size();
  return c;
}

std::vector<Program> read_corpus_folder(const std::filesystem::path& dir, const generators::GenConfig& config) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) return {};
  if (!std::filesystem::is_directory(status))
    throw reports::ReportError(dir.string() + ": --corpus names a file, not a folder: give a folder of programs");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec) throw reports::ReportError(dir.string() + ": cannot list the corpus folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<Program> out;
  for (const auto& f : files) {
    std::string text;
    try {
      text = files::read_text_file(f);
    } catch (const files::FileError& e) {
      throw reports::ReportError(e.what());
    }
    nlohmann::json j;
    try {
      j = program::parse_json_text(text, f.string());
    } catch (const program::JsonError& e) {
      throw reports::ReportError(e.what());
    }
    if (auto p = runnable(program_in(j, f.string()), config)) out.push_back(std::move(*p));
  }
  return out;
}

std::size_t write_corpus_folder(const std::filesystem::path& dir, const std::vector<Program>& programs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw reports::ReportError(dir.string() + ": cannot create the corpus folder" + (ec ? ": " + ec.message() : ""));
  std::size_t written = 0;
  for (const Program& p : programs) {
    const std::string text = program::to_json(p).dump(1) + "\n";
    const std::filesystem::path path = dir / file_name_of(text);
    if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    try {
      files::write_text_file_atomically(path, text, "a corpus program");
    } catch (const files::FileError& e) {
      throw reports::ReportError(e.what());
    }
    ++written;
  }
  return written;
}

}  // namespace parity::engine
