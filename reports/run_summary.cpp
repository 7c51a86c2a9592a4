#include "reports/run_summary.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "judge/coverage.h"
#include "judge/trace_json.h"
#include "program/internal_assert.h"
#include "program/json.h"
#include "reports/error.h"
#include "reports/json_fields.h"
#include "reports/jsonl.h"
#include "reports/schema_version.h"

namespace parity::reports {

std::string_view to_string(Isolation i) {
  switch (i) {
    case Isolation::Workers: return "workers";
    case Isolation::Fork: return "fork";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::optional<Isolation> parse_isolation(std::string_view s) {
  for (Isolation i : {Isolation::Workers, Isolation::Fork})
    if (to_string(i) == s) return i;
  return std::nullopt;
}

std::string describe_isolation(Isolation i, int jobs) {
  if (i == Isolation::Fork) return "a child forked per case";
  return std::to_string(jobs) + (jobs == 1 ? " worker" : " workers");
}

std::uint64_t cases_in_shard(std::uint64_t cases, const ShardInfo& shard) {
  const auto total = static_cast<std::uint64_t>(shard.total), index = static_cast<std::uint64_t>(shard.index);
  return cases > index ? (cases - index + total - 1) / total : 0;
}

using nlohmann::json;
using program::JsonError;

namespace {

constexpr std::string_view kWhat = "run summary";
const json& field(const json& j, const char* key) { return json_field(j, key, kWhat); }
template <typename T>
T get(const json& j, const char* key) {
  return json_typed<T>(j, key, kWhat);
}
std::uint64_t u64(const json& j, const char* key) { return json_u64(j, key, kWhat); }

// `within` names the enclosing object ("coverage") in messages, so a person finds the broken field.
template <typename V>
std::map<std::string, V> map_field(const json& j, const char* key, const std::string& within = "") {
  const std::string path = within.empty() ? std::string(key) : within + "." + key;
  const json& m = json_field(j, key, within.empty() ? std::string(kWhat) : std::string(kWhat) + ": " + within);
  if (!m.is_object()) throw JsonError("run summary: field \"" + path + "\" must be an object");
  std::map<std::string, V> out;
  for (const auto& [k, v] : m.items()) {
    if constexpr (std::is_same_v<V, OpCounts>) {
      if (!v.is_object()) throw JsonError("run summary: " + path + "." + k + " must be an object");
      out[k] = OpCounts{u64(v, "generated"), u64(v, "ok"), u64(v, "raised"), u64(v, "skipped")};
    } else {
      try {
        out[k] = program::uint64_from_json(v);
      } catch (const JsonError& e) {
        throw JsonError("run summary: " + path + "." + k + " " + e.what());
      }
    }
  }
  return out;
}

// The JSON name of each count map of Coverage; the same names as judge::coverage_dimensions().
constexpr std::pair<const char*, Coverage::Counts Coverage::*> kCoverageFields[] = {
    {"ops", &Coverage::ops},
    {"layouts", &Coverage::layouts},
    {"memory_formats", &Coverage::memory_formats},
    {"dtypes", &Coverage::dtypes},
    {"error_categories", &Coverage::error_categories},
    {"situations", &Coverage::situations},
    {"situation_pairs", &Coverage::situation_pairs},
    {"backward_through", &Coverage::backward_through},
    {"role_pairs", &Coverage::role_pairs},
    {"role_triples", &Coverage::role_triples},
    {"op_operands", &Coverage::op_operands},
};

Coverage::Counts Coverage::*counts_of(std::string_view dimension) {
  for (const auto& [name, counts] : kCoverageFields)
    if (name == dimension) return counts;
  throw std::logic_error("coverage dimension \"" + std::string(dimension) + "\" has no field in reports::Coverage");
}

json coverage_to_json(const Coverage& c) {
  json out = json::object();
  for (const auto& [name, counts] : kCoverageFields) out[name] = c.*counts;
  out["starved"] = starved(c);
  if (!c.not_goals.empty()) out["not_goals"] = c.not_goals;
  return out;
}

Coverage coverage_from_json(const json& j) {
  Coverage c;
  const json& cov = field(j, "coverage");
  if (!cov.is_object()) throw JsonError("run summary: field \"coverage\" must be an object");
  for (const auto& [name, counts] : kCoverageFields) {
    // Version 3 measured no pairs and no backward-through, version 7 no role tables, version 11 no op operands:
    // read as nothing reached.
    const bool newer = counts == &Coverage::situation_pairs || counts == &Coverage::backward_through ||
                       counts == &Coverage::role_pairs || counts == &Coverage::role_triples ||
                       counts == &Coverage::op_operands;
    if (!cov.contains(name) && newer) continue;
    c.*counts = map_field<std::uint64_t>(cov, name, "coverage");
  }
  if (cov.contains("not_goals")) {
    const auto names = get<std::vector<std::string>>(cov, "not_goals");
    c.not_goals.insert(names.begin(), names.end());
  }
  return c;
}

json budget_to_json(const Budget& b) {
  json out = {{"cases", b.cases ? program::uint64_to_json(*b.cases) : json(nullptr)},
              {"seconds", b.seconds ? json(*b.seconds) : json(nullptr)}};
  if (b.max_findings) out["max_findings"] = program::uint64_to_json(*b.max_findings);
  return out;
}

Budget budget_from_json(const json& j) {
  const json& b = field(j, "budget");
  if (!b.is_object()) throw JsonError("run summary: field \"budget\" must be an object");
  constexpr std::string_view what = "run summary: budget";
  Budget out;
  if (!json_field(b, "cases", what).is_null()) out.cases = json_u64(b, "cases", what);
  if (b.contains("max_findings")) out.max_findings = json_u64(b, "max_findings", what);
  if (!json_field(b, "seconds", what).is_null()) {
    out.seconds = json_typed<double>(b, "seconds", what);
    if (*out.seconds < 0) throw JsonError("run summary: budget.seconds must not be negative");
  }
  return out;
}

json guidance_to_json(const Guidance& g) {
  return {{"share", g.share}, {"mutated", g.mutated}, {"replayed", g.replayed}, {"added", g.added}, {"saved", g.saved}};
}

Guidance guidance_from_json(const json& j) {
  const json& g = field(j, "guidance");
  if (!g.is_object()) throw JsonError("run summary: field \"guidance\" must be an object");
  constexpr std::string_view what = "run summary: guidance";
  Guidance out{json_typed<double>(g, "share", what), json_u64(g, "mutated", what), json_u64(g, "replayed", what),
               json_u64(g, "added", what), json_u64(g, "saved", what)};
  if (!(out.share >= 0 && out.share <= 1)) throw JsonError("run summary: guidance.share must lie in [0, 1]");
  return out;
}

}  // namespace

Coverage Coverage::zeroed() {
  Coverage c;
  for (const auto& dim : judge::coverage_dimensions()) {
    Counts& counts = c.*counts_of(dim.name);
    for (const auto& key : dim.keys) counts[key] = 0;
  }
  return c;
}

std::vector<std::string> starved(const Coverage& c) {
  std::vector<std::string> out;
  for (const auto& dim : judge::coverage_dimensions()) {
    const Coverage::Counts& counts = c.*counts_of(dim.name);
    for (const auto& key : dim.keys) {
      auto it = counts.find(key);
      const std::string name = std::string(dim.name) + "." + key;
      if ((it == counts.end() || it->second == 0) && !c.not_goals.contains(name)) out.push_back(name);
    }
  }
  return out;
}

json to_json(const RunSummary& r) {
  json ops = json::object();
  for (const auto& [name, c] : r.ops)
    ops[name] = {{"generated", c.generated}, {"ok", c.ok}, {"raised", c.raised}, {"skipped", c.skipped}};
  json by_kind = json::object();
  for (const auto& [kind, n] : r.findings_by_kind) by_kind[std::string(judge::to_string(kind))] = n;
  json out = {{"schema_version", kReportSchemaVersion},
          {"kind", "run"},
          {"libtorch_version", r.libtorch_version},
          {"parity_commit", r.parity_commit},
          {"generator_version", r.generator_version},
          {"device", r.device},
          {"oracle", to_string(r.oracle)},
          {"planted_faults", r.planted_faults},
          {"seed", program::uint64_to_json(r.seed)},
          {"seconds", r.seconds},
          {"cases", r.cases},
          {"cases_per_second", r.cases_per_second},
          {"findings", r.findings},
          {"unexpected_findings", r.unexpected_findings},
          {"expected_findings", r.expected_findings},
          {"recorded_findings", r.recorded_findings},
          {"crashes", r.crashes},
          {"timeouts", r.timeouts},
          {"out_of_memory", r.out_of_memory},
          {"shrink_seconds", r.shrink_seconds},
          {"unshrunk_findings", r.unshrunk_findings},
          {"flaky_findings", r.flaky_findings},
          {"groups", to_json(r.groups)},
          {"findings_by_kind", std::move(by_kind)},
          {"ops", std::move(ops)},
          {"error_categories", r.error_categories},
          {"known_divergence_hits", r.known_divergence_hits},
          {"coverage", coverage_to_json(r.coverage)},
          {"shard", {{"index", r.shard.index}, {"total", r.shard.total}}},
          {"budget", budget_to_json(r.budget)},
          {"guidance", guidance_to_json(r.guidance)},
          {"max_steps", r.max_steps},
          {"timeout_ms", r.timeout_ms},
          {"isolation", to_string(r.isolation)},
          {"jobs", r.jobs},
          {"memory_limit_mb", r.memory_limit_mb},
          {"interrupted", r.interrupted},
          {"resumed", r.resumed},
          {"partial", r.partial}};
  if (r.drift) out["drift"] = {{"other_libtorch_version", r.drift->other_libtorch_version}, {"other_parity", r.drift->other_parity}};
  if (r.backends) {
    auto side = [](const RunSummary::Side& s) {
      return json{{"command", s.command}, {"library", s.library}, {"version", s.version}, {"protocol", s.protocol}};
    };
    out["backends"] = {{"impl", side(r.backends->impl)},
                       {"oracle", side(r.backends->oracle)},
                       {"not_compared", r.backends->not_compared},
                       {"ops_left_out", r.backends->ops_left_out}};
  }
  return out;
}

RunSummary run_summary_from_json(const json& j) {
  if (!j.is_object()) throw JsonError("run summary: must be a JSON object");
  if (get<std::string>(j, "kind") != "run") throw JsonError("run summary: field \"kind\" must be \"run\"");
  check_report_schema_version(j, kWhat, 2);  // version 1 had no groups
  RunSummary r;
  r.libtorch_version = get<std::string>(j, "libtorch_version");
  r.parity_commit = get<std::string>(j, "parity_commit");
  r.generator_version = get<int>(j, "generator_version");
  r.device = get<std::string>(j, "device");
  r.planted_faults = get<std::vector<std::string>>(j, "planted_faults");
  r.oracle = oracle_field(j, "run summary");
  r.seed = u64(j, "seed");
  r.seconds = get<double>(j, "seconds");
  r.cases = u64(j, "cases");
  r.cases_per_second = get<double>(j, "cases_per_second");
  r.findings = u64(j, "findings");
  r.unexpected_findings = u64(j, "unexpected_findings");
  r.expected_findings = u64(j, "expected_findings");
  r.recorded_findings = u64(j, "recorded_findings");
  r.crashes = u64(j, "crashes");
  r.timeouts = u64(j, "timeouts");
  // Absent from run.json written before persistent workers: the defaults are what those campaigns did.
  r.out_of_memory = j.contains("out_of_memory") ? u64(j, "out_of_memory") : 0;
  r.shrink_seconds = j.contains("shrink_seconds") ? get<double>(j, "shrink_seconds") : 0;
  r.unshrunk_findings = j.contains("unshrunk_findings") ? u64(j, "unshrunk_findings") : 0;
  // Absent from run.json written before confirmation and --resume: nothing was flaky or resumed then.
  r.flaky_findings = j.contains("flaky_findings") ? u64(j, "flaky_findings") : 0;
  r.groups = finding_groups_from_json(field(j, "groups"));
  for (const auto& [name, n] : map_field<std::uint64_t>(j, "findings_by_kind")) {
    auto kind = judge::parse_divergence_kind(name);
    if (!kind) throw JsonError("run summary: findings_by_kind." + name.substr(0, 80) + " is not a divergence kind");
    r.findings_by_kind[*kind] = n;
  }
  r.ops = map_field<OpCounts>(j, "ops");
  r.error_categories = map_field<std::uint64_t>(j, "error_categories");
  r.known_divergence_hits = map_field<std::uint64_t>(j, "known_divergence_hits");
  r.coverage = coverage_from_json(j);
  const json& shard = field(j, "shard");
  r.shard.index = get<int>(shard, "index");
  r.shard.total = get<int>(shard, "total");
  // Readers size and index by these (merge lists the missing shards): hostile values stop here.
  if (r.shard.total < 1 || r.shard.total > kMaxShards)
    throw JsonError("run summary: shard.total " + std::to_string(r.shard.total) + " must be between 1 and " +
                    std::to_string(kMaxShards));
  if (r.shard.index < 0 || r.shard.index >= r.shard.total)
    throw JsonError("run summary: shard.index " + std::to_string(r.shard.index) + " must be below shard.total (" +
                    std::to_string(r.shard.total) + ")");
  // Absent before version 5: the budget is unknown, as if neither flag had been given.
  if (j.contains("budget")) r.budget = budget_from_json(j);
  // Absent before version 9: no guidance.
  if (j.contains("guidance")) r.guidance = guidance_from_json(j);
  r.max_steps = get<int>(j, "max_steps");
  r.timeout_ms = get<int>(j, "timeout_ms");
  if (j.contains("isolation")) {
    auto isolation = parse_isolation(get<std::string>(j, "isolation"));
    if (!isolation) throw JsonError("run summary: isolation must be \"workers\" or \"fork\"");
    r.isolation = *isolation;
  } else {
    r.isolation = Isolation::Fork;  // what campaigns did before persistent workers
  }
  r.jobs = j.contains("jobs") ? get<int>(j, "jobs") : 1;
  r.memory_limit_mb = j.contains("memory_limit_mb") ? u64(j, "memory_limit_mb") : 0;
  r.interrupted = get<bool>(j, "interrupted");
  r.resumed = j.contains("resumed") ? get<int>(j, "resumed") : 0;
  if (j.contains("partial")) r.partial = get<std::vector<std::string>>(j, "partial");  // version 5 on
  if (j.contains("drift")) {
    const json& d = j.at("drift");
    if (!d.is_object()) throw JsonError("run summary: field \"drift\" must be an object");
    r.drift = RunSummary::Drift{get<std::string>(d, "other_libtorch_version"), get<std::string>(d, "other_parity")};
  }
  if (j.contains("backends")) {
    const json& b = j.at("backends");
    if (!b.is_object()) throw JsonError("run summary: field \"backends\" must be an object");
    auto side = [](const json& s) {
      if (!s.is_object()) throw JsonError("run summary: each side of \"backends\" must be an object");
      return RunSummary::Side{get<std::string>(s, "command"), get<std::string>(s, "library"),
                              get<std::string>(s, "version"), get<int>(s, "protocol")};
    };
    r.backends = RunSummary::Backends{side(b.at("impl")), side(b.at("oracle")),
                                      get<std::vector<std::string>>(b, "not_compared"),
                                      get<std::vector<std::string>>(b, "ops_left_out")};
  }
  return r;
}

std::vector<std::string> count_problems(const RunSummary& s) {
  std::vector<std::string> out;
  auto at_most = [&](std::string_view what, std::uint64_t n, std::string_view limit_what, std::uint64_t limit) {
    if (n > limit)
      out.push_back(std::string(what) + " is " + std::to_string(n) + ", more than " + std::string(limit_what) + " (" +
                    std::to_string(limit) + ")");
  };
  auto equal = [&](std::string_view what, std::uint64_t n, std::string_view sum_what, std::uint64_t sum) {
    if (n != sum)
      out.push_back(std::string(what) + " is " + std::to_string(n) + ", but " + std::string(sum_what) + " is " +
                    std::to_string(sum));
  };
  std::uint64_t in_groups = 0, by_kind = 0;
  for (const auto& [sig, g] : s.groups) in_groups += g.count;
  for (const auto& [kind, n] : s.findings_by_kind) by_kind += n;
  equal("findings", s.findings, "unexpected_findings + expected_findings", s.unexpected_findings + s.expected_findings);
  equal("findings", s.findings, "the sum of groups' counts", in_groups);
  equal("findings", s.findings, "the sum of findings_by_kind", by_kind);
  at_most("findings", s.findings, "cases", s.cases);
  at_most("recorded_findings", s.recorded_findings, "findings", s.findings);
  at_most("crashes + timeouts + out_of_memory", s.crashes + s.timeouts + s.out_of_memory, "cases", s.cases);
  if (s.budget.cases)
    at_most("cases", s.cases, "the cases budget.cases gives shard " + std::to_string(s.shard.index) + "/" +
                                  std::to_string(s.shard.total),
            cases_in_shard(*s.budget.cases, s.shard));
  return out;
}

void write_run_summary(const std::filesystem::path& path, const RunSummary& s) {
  files::write_text_file_atomically(path, to_json(s).dump(2) + "\n", "the run summary");
}

}  // namespace parity::reports
