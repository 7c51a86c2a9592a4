#include "reports/merge.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "program/json.h"
#include "reports/error.h"
#include "reports/finding.h"

namespace parity::reports {

namespace {

// Indices listed in "shards missing: ..." before the rest are counted: a hostile total cannot make it long.
constexpr std::size_t kMissingShown = 10;

template <typename Map>
void add_counts(Map& into, const Map& from) {
  for (const auto& [key, n] : from) into[key] += n;
}

void add_counts(std::map<std::string, OpCounts>& into, const std::map<std::string, OpCounts>& from) {
  for (const auto& [op, c] : from) {
    OpCounts& t = into[op];
    t.generated += c.generated;
    t.ok += c.ok;
    t.raised += c.raised;
    t.skipped += c.skipped;
  }
}

std::string run_json(const ShardOutput& s) { return (s.dir / "run.json").string(); }

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

std::string describe(const Budget& b) {
  if (!b.cases && !b.seconds) return "unknown (a run.json of version 4 or older)";
  std::string out;
  if (b.cases) out = "--cases " + std::to_string(*b.cases);
  if (b.seconds) out += (out.empty() ? "" : " ") + std::string("--seconds ") + seconds_text(*b.seconds);
  return out;
}

std::string describe(const ShardInfo& s) {
  return "shard " + std::to_string(s.index) + " of " + std::to_string(s.total);
}

// Shards of one campaign agree on everything that decides which programs ran and how they were judged.
void check_same_campaign(const ShardOutput& first_shard, const ShardOutput& shard) {
  const RunSummary& first = first_shard.summary;
  const RunSummary& s = shard.summary;
  auto refuse = [&](const std::string& what, const std::string& a, const std::string& b) {
    throw ReportError(run_json(shard) + " is from another campaign than " + run_json(first_shard) + ": its " + what +
                      " is " + b + ", the other's is " + a);
  };
  if (s.seed != first.seed) refuse("seed", std::to_string(first.seed), std::to_string(s.seed));
  if (s.generator_version != first.generator_version)
    refuse("generator version", std::to_string(first.generator_version), std::to_string(s.generator_version));
  if (s.libtorch_version != first.libtorch_version) refuse("LibTorch version", first.libtorch_version, s.libtorch_version);
  if (s.parity_commit != first.parity_commit) refuse("parity commit", first.parity_commit, s.parity_commit);
  if (s.max_steps != first.max_steps) refuse("max steps", std::to_string(first.max_steps), std::to_string(s.max_steps));
  if (s.timeout_ms != first.timeout_ms)
    refuse("time limit", std::to_string(first.timeout_ms) + " ms", std::to_string(s.timeout_ms) + " ms");
  if (s.memory_limit_mb != first.memory_limit_mb)
    refuse("memory limit", std::to_string(first.memory_limit_mb) + " MiB", std::to_string(s.memory_limit_mb) + " MiB");
  if (s.budget != first.budget) refuse("budget", describe(first.budget), describe(s.budget));
  if (s.guidance.share != first.guidance.share)
    refuse("guided share", std::to_string(first.guidance.share), std::to_string(s.guidance.share));
  if (s.device != first.device) refuse("device", first.device, s.device);
  if (s.oracle != first.oracle)
    refuse("oracle", std::string(to_string(first.oracle)), std::string(to_string(s.oracle)));
  auto drift = [](const RunSummary& r) {
    return r.drift ? "a drift run against LibTorch " + r.drift->other_libtorch_version : std::string("a campaign");
  };
  if (drift(s) != drift(first)) refuse("kind", drift(first), drift(s));
  // The known divergences in force decide which findings are expected; the hits map lists them all.
  auto ledger = [](const RunSummary& r) {
    std::vector<std::string> in_force;
    for (const auto& [sig, hits] : r.known_divergence_hits) in_force.push_back(sig);
    return in_force.empty() ? std::string("none") : program::join(in_force, ", ");
  };
  if (ledger(s) != ledger(first)) refuse("known divergences in force", ledger(first), ledger(s));
  auto faults = [](const RunSummary& r) {
    return r.planted_faults.empty() ? std::string("none") : program::join(r.planted_faults, ",");
  };
  if (s.planted_faults != first.planted_faults) refuse("planted faults", faults(first), faults(s));
  if (s.shard.total != first.shard.total)
    refuse("shard count", std::to_string(first.shard.total), std::to_string(s.shard.total));
}

// What a shard's run.json says of its own completeness: interrupted, or short of its case budget. A count above the
// budget is no campaign's run.json at all.
void check_cases(const ShardOutput& shard, std::vector<std::string>& problems) {
  const RunSummary& s = shard.summary;
  const std::string expected =
      s.budget.cases ? " of its " + std::to_string(cases_in_shard(*s.budget.cases, s.shard)) : std::string();
  if (s.budget.cases && s.cases > cases_in_shard(*s.budget.cases, s.shard))
    throw ReportError(run_json(shard) + " counts " + std::to_string(s.cases) + " cases, more than the " +
                      std::to_string(cases_in_shard(*s.budget.cases, s.shard)) + " that --cases " +
                      std::to_string(*s.budget.cases) + " gives " + describe(s.shard) +
                      ": it is not the run.json of a campaign");
  if (s.interrupted) {
    problems.push_back(run_json(shard) + ": " + describe(s.shard) + " was interrupted after " +
                       std::to_string(s.cases) + expected + " cases");
  } else if (s.budget.cases && s.cases < cases_in_shard(*s.budget.cases, s.shard)) {
    problems.push_back(run_json(shard) + ": " + describe(s.shard) + " ran " + std::to_string(s.cases) + expected +
                       " cases" + (s.budget.seconds ? " before its --seconds " + seconds_text(*s.budget.seconds) +
                                                          " ran out"
                                                    : std::string()));
  }
}

// Why a findings.jsonl record is not a finding of this shard; empty when it is one.
std::string not_a_finding_of(const nlohmann::json& record, const RunSummary& s) {
  Finding f;
  try {
    f = finding_from_json(record);
  } catch (const program::JsonError& e) {
    return std::string("not a finding: ") + e.what();
  }
  if (f.seed != s.seed)
    return "a finding of seed " + std::to_string(f.seed) + ", not of this campaign's (" + std::to_string(s.seed) + ")";
  const auto total = static_cast<std::uint64_t>(s.shard.total), index = static_cast<std::uint64_t>(s.shard.index);
  if (f.case_index % total != index)
    return "case " + std::to_string(f.case_index) + " is not one of " + describe(s.shard) + "'s cases";
  if (s.budget.cases && f.case_index >= *s.budget.cases)
    return "case " + std::to_string(f.case_index) + " is beyond the campaign's --cases " +
           std::to_string(*s.budget.cases);
  return "";
}

// Keeps the shard's findings that are findings of it; every other line, a torn tail and findings lost (fewer than
// run.json recorded) are problems.
void take_findings(const ShardOutput& shard, std::vector<nlohmann::json>& into, std::vector<std::string>& problems) {
  const std::string file = (shard.dir / "findings.jsonl").string();
  std::vector<std::string> bad = shard.findings.malformed;  // "FILE:LINE: malformed JSON line: ..."
  std::uint64_t kept = 0;
  for (std::size_t i = 0; i < shard.findings.records.size(); ++i) {
    const std::string why = not_a_finding_of(shard.findings.records[i], shard.summary);
    if (why.empty()) {
      into.push_back(shard.findings.records[i]);
      ++kept;
      continue;
    }
    const std::size_t line = i < shard.findings.lines.size() ? shard.findings.lines[i] : i + 1;
    bad.push_back(file + ":" + std::to_string(line) + ": " + why);
  }
  for (std::size_t i = 0; i < bad.size() && i < kMaxProblemsPerFile; ++i) problems.push_back(bad[i]);
  if (bad.size() > kMaxProblemsPerFile)
    problems.push_back(file + ": " + std::to_string(bad.size() - kMaxProblemsPerFile) +
                       " more lines that are no findings of " + describe(shard.summary.shard));
  if (shard.findings.torn_tail)
    problems.push_back(file + ": its last line is torn (the shard was killed while writing it)");
  const std::uint64_t recorded = shard.summary.recorded_findings;
  if (kept < recorded)
    problems.push_back(file + " holds " + std::to_string(kept) + " of the " + std::to_string(recorded) +
                       " findings its run.json recorded: " + std::to_string(recorded - kept) + " lost");
  else if (kept > recorded)
    problems.push_back(file + " holds " + std::to_string(kept) + " findings, more than the " +
                       std::to_string(recorded) + " its run.json recorded");
}

// "shards missing: 1, 3 (of 4)...", or nothing when every index is there.
std::string missing_shards(const std::map<int, const ShardOutput*>& seen, int total) {
  std::string listed;
  std::size_t missing = 0;
  for (int k = 0; k < total; ++k) {
    if (seen.count(k)) continue;
    if (++missing <= kMissingShown) listed += (listed.empty() ? "" : ", ") + std::to_string(k);
  }
  if (missing == 0) return "";
  if (missing > kMissingShown) listed += " and " + std::to_string(missing - kMissingShown) + " more";
  return "shards missing: " + listed + " (of " + std::to_string(total) +
         "); a campaign is only whole with every shard's output";
}

}  // namespace

MergedRun merge_shards(const std::vector<ShardOutput>& shards) {
  if (shards.empty()) throw ReportError("nothing to merge");
  const ShardOutput& first = shards.front();
  MergedRun merged;
  std::map<int, const ShardOutput*> seen;
  for (const ShardOutput& shard : shards) {
    check_same_campaign(first, shard);
    const auto [at, fresh] = seen.emplace(shard.summary.shard.index, &shard);
    if (!fresh)
      throw ReportError(run_json(shard) + " is " + describe(shard.summary.shard) + ", as " + run_json(*at->second) +
                        " is: a shard given twice");
    check_cases(shard, merged.problems);
  }
  if (std::string missing = missing_shards(seen, first.summary.shard.total); !missing.empty())
    merged.problems.push_back(std::move(missing));
  for (const ShardOutput& shard : shards) take_findings(shard, merged.findings, merged.problems);
  // A merge of partial merges stays partial, saying why.
  std::vector<std::string> inherited;
  for (const ShardOutput& shard : shards)
    inherited.insert(inherited.end(), shard.summary.partial.begin(), shard.summary.partial.end());
  merged.problems.insert(merged.problems.begin(), inherited.begin(), inherited.end());

  RunSummary& out = merged.summary;
  out = first.summary;
  out.seconds = 0;
  out.cases = out.findings = out.unexpected_findings = out.expected_findings = out.recorded_findings = 0;
  out.crashes = out.timeouts = out.out_of_memory = out.unshrunk_findings = out.flaky_findings = 0;
  out.resumed = 0;
  out.guidance = {first.summary.guidance.share, 0, 0, 0, 0};
  out.shrink_seconds = 0;
  out.groups.clear();
  out.findings_by_kind.clear();
  out.ops.clear();
  out.error_categories.clear();
  out.known_divergence_hits.clear();
  out.coverage = Coverage{};
  out.interrupted = false;
  for (const ShardOutput& shard : shards) {
    const RunSummary& s = shard.summary;
    out.seconds = std::max(out.seconds, s.seconds);  // the shards ran side by side
    out.cases += s.cases;
    out.findings += s.findings;
    out.unexpected_findings += s.unexpected_findings;
    out.expected_findings += s.expected_findings;
    out.crashes += s.crashes;
    out.timeouts += s.timeouts;
    out.out_of_memory += s.out_of_memory;
    out.shrink_seconds += s.shrink_seconds;
    out.unshrunk_findings += s.unshrunk_findings;
    out.flaky_findings += s.flaky_findings;
    out.resumed += s.resumed;
    out.guidance.mutated += s.guidance.mutated;
    out.guidance.replayed += s.guidance.replayed;
    out.guidance.added += s.guidance.added;
    out.guidance.saved += s.guidance.saved;
    for (const auto& [sig, g] : s.groups) out.groups[sig].merge(g);
    add_counts(out.findings_by_kind, s.findings_by_kind);
    add_counts(out.ops, s.ops);
    add_counts(out.error_categories, s.error_categories);
    add_counts(out.known_divergence_hits, s.known_divergence_hits);
    add_counts(out.coverage.ops, s.coverage.ops);
    add_counts(out.coverage.layouts, s.coverage.layouts);
    add_counts(out.coverage.memory_formats, s.coverage.memory_formats);
    add_counts(out.coverage.dtypes, s.coverage.dtypes);
    add_counts(out.coverage.error_categories, s.coverage.error_categories);
    add_counts(out.coverage.situations, s.coverage.situations);
    add_counts(out.coverage.situation_pairs, s.coverage.situation_pairs);
    add_counts(out.coverage.backward_through, s.coverage.backward_through);
    add_counts(out.coverage.role_pairs, s.coverage.role_pairs);
    add_counts(out.coverage.role_triples, s.coverage.role_triples);
    add_counts(out.coverage.op_operands, s.coverage.op_operands);
    out.coverage.not_goals.insert(s.coverage.not_goals.begin(), s.coverage.not_goals.end());
    out.interrupted = out.interrupted || s.interrupted;
  }
  out.recorded_findings = merged.findings.size();  // what the merged findings.jsonl holds
  out.cases_per_second = out.seconds > 0 ? static_cast<double>(out.cases) / out.seconds : 0;
  out.shard = ShardInfo{0, 1};
  out.partial = merged.problems;
  return merged;
}

}  // namespace parity::reports
