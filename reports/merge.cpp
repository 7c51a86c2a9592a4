#include "reports/merge.h"

#include <algorithm>
#include <set>
#include <string>

#include "reports/error.h"

namespace parity::reports {

namespace {

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

// Shards of one campaign agree on everything that decides which programs ran and how they were judged.
void check_same_campaign(const RunSummary& first, const RunSummary& s, std::size_t i) {
  auto refuse = [&](const std::string& what, const std::string& a, const std::string& b) {
    throw ReportError("shard output " + std::to_string(i + 1) + " is from another campaign: its " + what + " is " +
                      b + ", the first one's is " + a);
  };
  if (s.seed != first.seed) refuse("seed", std::to_string(first.seed), std::to_string(s.seed));
  if (s.generator_version != first.generator_version)
    refuse("generator version", std::to_string(first.generator_version), std::to_string(s.generator_version));
  if (s.libtorch_version != first.libtorch_version) refuse("LibTorch version", first.libtorch_version, s.libtorch_version);
  if (s.parity_commit != first.parity_commit) refuse("parity commit", first.parity_commit, s.parity_commit);
  if (s.max_steps != first.max_steps) refuse("max steps", std::to_string(first.max_steps), std::to_string(s.max_steps));
  if (s.timeout_ms != first.timeout_ms)
    refuse("time limit", std::to_string(first.timeout_ms) + " ms", std::to_string(s.timeout_ms) + " ms");
  if (s.device != first.device) refuse("device", first.device, s.device);
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

}  // namespace

RunSummary merge_summaries(const std::vector<RunSummary>& shards) {
  if (shards.empty()) throw ReportError("nothing to merge");
  const RunSummary& first = shards.front();
  std::set<int> seen;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    check_same_campaign(first, shards[i], i);
    if (!seen.insert(shards[i].shard.index).second)
      throw ReportError("shard " + std::to_string(shards[i].shard.index) + " of " + std::to_string(first.shard.total) +
                        " is given twice");
  }
  std::string missing;
  for (int k = 0; k < first.shard.total; ++k)
    if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  if (!missing.empty())
    throw ReportError("shards missing: " + missing + " (of " + std::to_string(first.shard.total) +
                      "); a campaign is only whole with every shard's output");

  RunSummary out = first;
  out.seconds = 0;
  out.cases = out.findings = out.unexpected_findings = out.expected_findings = out.recorded_findings = 0;
  out.crashes = out.timeouts = out.out_of_memory = out.unshrunk_findings = out.flaky_findings = 0;
  out.resumed = 0;
  out.shrink_seconds = 0;
  out.groups.clear();
  out.findings_by_kind.clear();
  out.ops.clear();
  out.error_categories.clear();
  out.known_divergence_hits.clear();
  out.coverage = Coverage{};
  out.interrupted = false;
  for (const RunSummary& s : shards) {
    out.seconds = std::max(out.seconds, s.seconds);  // the shards ran side by side
    out.cases += s.cases;
    out.findings += s.findings;
    out.unexpected_findings += s.unexpected_findings;
    out.expected_findings += s.expected_findings;
    out.recorded_findings += s.recorded_findings;
    out.crashes += s.crashes;
    out.timeouts += s.timeouts;
    out.out_of_memory += s.out_of_memory;
    out.shrink_seconds += s.shrink_seconds;
    out.unshrunk_findings += s.unshrunk_findings;
    out.flaky_findings += s.flaky_findings;
    out.resumed += s.resumed;
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
    out.interrupted = out.interrupted || s.interrupted;
  }
  out.cases_per_second = out.seconds > 0 ? static_cast<double>(out.cases) / out.seconds : 0;
  out.shard = ShardInfo{0, 1};
  return out;
}

}  // namespace parity::reports
