// reports/merge: shards of one campaign are summed; another campaign's or an inconsistent set is refused, naming
// the file; a partial set (a shard missing, interrupted or short, findings.jsonl lines that are no findings of their
// shard, findings lost) is merged with every problem named, for the caller to refuse or to record.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "program/json.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/merge.h"
#include "reports/run_summary.h"

namespace parity::reports {
namespace {

using nlohmann::json;

judge::Signature sig(std::string_view text) { return judge::Signature::parse(text).value(); }

RunSummary shard_summary(int index, int total, std::uint64_t cases, double seconds) {
  RunSummary r;
  r.libtorch_version = "1.13.0";
  r.parity_commit = "abc";
  r.generator_version = 2;
  r.seed = 9;
  r.max_steps = 14;
  r.timeout_ms = 10000;
  r.shard = {index, total};
  r.cases = cases;
  r.seconds = seconds;
  r.findings = r.unexpected_findings = 1;
  r.groups[sig("add:values")].add_case(static_cast<std::uint64_t>(index));
  r.ops = {{"add", {cases, cases, 0, 0}}};
  r.coverage = Coverage::zeroed();
  r.coverage.situations["version_error"] = cases;
  return r;
}

ShardOutput shard(int index, int total, std::uint64_t cases, double seconds = 1) {
  return {"s" + std::to_string(index), shard_summary(index, total, cases, seconds), {}};
}

// A finding of case k of seed 9, as findings.jsonl holds it.
json finding_line(std::uint64_t k, std::uint64_t seed = 9) {
  Finding f;
  f.parity_commit = "abc";
  f.libtorch_version = "1.13.0";
  f.seed = seed;
  f.case_index = k;
  f.signature = sig("add:values");
  program::Step r;
  r.op = program::OpId::Rand;
  r.attrs.sizes = {2};
  r.attrs.strides = {1};
  f.program.steps.push_back(r);
  f.divergence = {0, 0, judge::DivergenceKind::Values, "1", "2", judge::Divergence::Severity::Major, {}, {}};
  return to_json(f);
}

void add_records(ShardOutput& s, std::vector<json> records) {
  for (auto& r : records) {
    s.findings.records.push_back(std::move(r));
    s.findings.lines.push_back(s.findings.records.size());
  }
}

std::string refusal(const std::vector<ShardOutput>& shards) {
  try {
    merge_shards(shards);
  } catch (const ReportError& e) {
    return e.what();
  }
  return "merged";
}

bool mentions(const std::vector<std::string>& problems, std::string_view fragment) {
  return std::any_of(problems.begin(), problems.end(), [&](const auto& p) { return p.find(fragment) != p.npos; });
}

TEST(Merge, SumsShardsOfOneCampaign) {
  const MergedRun m = merge_shards({shard(1, 2, 30, 2.0), shard(0, 2, 10, 4.0)});
  EXPECT_EQ(m.summary.cases, 40u);
  EXPECT_DOUBLE_EQ(m.summary.seconds, 4.0);  // side by side: the longest shard
  EXPECT_DOUBLE_EQ(m.summary.cases_per_second, 10.0);
  EXPECT_EQ(m.summary.groups.at(sig("add:values")).count, 2u);
  EXPECT_EQ(m.summary.groups.at(sig("add:values")).first_case, 0u);
  EXPECT_EQ(m.summary.ops.at("add").generated, 40u);
  EXPECT_EQ(m.summary.coverage.situations.at("version_error"), 40u);
  EXPECT_EQ(m.summary.shard, (ShardInfo{0, 1}));
  EXPECT_TRUE(m.problems.empty());
  EXPECT_TRUE(m.summary.partial.empty());
}

TEST(Merge, RefusesOtherCampaignsNamingTheFiles) {
  ShardOutput other_seed = shard(1, 2, 5);
  other_seed.summary.seed = 10;
  EXPECT_NE(refusal({shard(0, 2, 5), other_seed}).find("s1/run.json is from another campaign than s0/run.json: its seed "
                                                       "is 10"),
            std::string::npos);
  ShardOutput other_torch = shard(1, 2, 5);
  other_torch.summary.libtorch_version = "2.1.0";
  EXPECT_NE(refusal({shard(0, 2, 5), other_torch}).find("LibTorch version"), std::string::npos);
  ShardOutput other_ledger = shard(1, 2, 5);
  other_ledger.summary.known_divergence_hits = {{"add:values", 0}};
  EXPECT_NE(refusal({shard(0, 2, 5), other_ledger}).find("known divergences in force is add:values"), std::string::npos);
  ShardOutput planted = shard(1, 2, 5);
  planted.summary.planted_faults = {"mul=values"};
  EXPECT_NE(refusal({shard(0, 2, 5), planted}).find("planted faults is mul=values, the other's is none"),
            std::string::npos);
  ShardOutput judged_by_impl = shard(1, 2, 5);
  judged_by_impl.summary.oracle = Oracle::ImplCpu;
  EXPECT_NE(refusal({shard(0, 2, 5), judged_by_impl}).find("its oracle is impl-cpu, the other's is libtorch"),
            std::string::npos);
  EXPECT_NE(refusal({shard(0, 2, 5), shard(0, 2, 5)}).find("a shard given twice"), std::string::npos);
  EXPECT_EQ(refusal({}), "nothing to merge");
}

TEST(Merge, RefusesShardsOfAnotherBudget) {
  ShardOutput a = shard(0, 2, 1000), b = shard(1, 2, 500);
  a.summary.budget.cases = 2000;
  b.summary.budget.cases = 1000;  // a smaller campaign's shard would leave cases 1000..1999 of shard 1 unrun
  EXPECT_NE(refusal({a, b}).find("its budget is --cases 1000, the other's is --cases 2000"), std::string::npos);
  b.summary.budget = {2000, 60.0};
  EXPECT_NE(refusal({a, b}).find("its budget is --cases 2000 --seconds 60"), std::string::npos);
}

TEST(Merge, RefusesARunJsonCountingMoreCasesThanItsBudgetHolds) {
  ShardOutput a = shard(0, 2, 5), b = shard(1, 2, 6);
  a.summary.budget.cases = b.summary.budget.cases = 10;  // 5 cases each
  EXPECT_NE(refusal({a, b}).find("s1/run.json counts 6 cases, more than the 5 that --cases 10 gives shard 1 of 2"),
            std::string::npos);
}

TEST(Merge, NamesInterruptedShortAndMissingShards) {
  ShardOutput a = shard(0, 4, 2), b = shard(1, 4, 3), c = shard(3, 4, 1);
  for (ShardOutput* s : {&a, &b, &c}) s->summary.budget.cases = 12;  // 3 cases each
  a.summary.interrupted = true;
  c.summary.budget.seconds = 5;
  b.summary.budget.seconds = 5;
  a.summary.budget.seconds = 5;
  const MergedRun m = merge_shards({a, b, c});
  EXPECT_TRUE(mentions(m.problems, "s0/run.json: shard 0 of 4 was interrupted after 2 of its 3 cases"));
  EXPECT_TRUE(mentions(m.problems, "s3/run.json: shard 3 of 4 ran 1 of its 3 cases before its --seconds 5 ran out"));
  EXPECT_FALSE(mentions(m.problems, "s1/run.json"));  // it ran all 3
  EXPECT_TRUE(mentions(m.problems, "shards missing: 2 (of 4)"));
  EXPECT_EQ(m.summary.partial, m.problems);
  EXPECT_TRUE(m.summary.interrupted);
}

TEST(Merge, ListsAFewOfManyMissingShards) {
  // The reader bounds a total (kMaxShards); the list of missing ones stays short however large it is.
  const MergedRun m = merge_shards({shard(0, kMaxShards, 1)});
  ASSERT_EQ(m.problems.size(), 1u);
  EXPECT_NE(m.problems[0].find("shards missing: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 999989 more (of 1000000)"),
            std::string::npos)
      << m.problems[0];
  EXPECT_LT(m.problems[0].size(), 200u);
}

TEST(Merge, KeepsOnlyLinesThatAreFindingsOfTheirShard) {
  ShardOutput a = shard(0, 2, 5), b = shard(1, 2, 5);
  a.summary.budget.cases = b.summary.budget.cases = 10;
  add_records(a, {finding_line(0), json(42), finding_line(4, 10), finding_line(3), finding_line(12)});
  a.summary.recorded_findings = 5;
  add_records(b, {finding_line(1)});
  b.summary.recorded_findings = 1;
  const MergedRun m = merge_shards({a, b});
  ASSERT_EQ(m.findings.size(), 2u);
  EXPECT_EQ(m.findings[0]["case_index"], 0);
  EXPECT_EQ(m.findings[1]["case_index"], 1);
  EXPECT_EQ(m.summary.recorded_findings, 2u);
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl:2: not a finding: finding: must be a JSON object"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl:3: a finding of seed 10, not of this campaign's (9)"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl:4: case 3 is not one of shard 0 of 2's cases"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl:5: case 12 is beyond the campaign's --cases 10"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl holds 1 of the 5 findings its run.json recorded: 4 lost"));
  EXPECT_FALSE(mentions(m.problems, "s1/"));
}

TEST(Merge, NamesTornTailsMalformedLinesAndLostFindings) {
  ShardOutput a = shard(0, 1, 5);
  a.findings.torn_tail = true;
  a.findings.malformed = {"s0/findings.jsonl:2: malformed JSON line: parse error"};
  add_records(a, {finding_line(0)});
  a.summary.recorded_findings = 3;
  const MergedRun m = merge_shards({a});
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl:2: malformed JSON line"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl: its last line is torn"));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl holds 1 of the 3 findings its run.json recorded: 2 lost"));
}

TEST(Merge, NamesMoreFindingsThanRunJsonRecorded) {
  ShardOutput a = shard(0, 1, 5);
  add_records(a, {finding_line(0), finding_line(1)});
  a.summary.recorded_findings = 1;
  const MergedRun m = merge_shards({a});
  EXPECT_EQ(m.findings.size(), 2u);
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl holds 2 findings, more than the 1 its run.json recorded"));
}

TEST(Merge, BoundsTheProblemsNamedPerFile) {
  ShardOutput a = shard(0, 1, 5);
  std::vector<json> junk(kMaxProblemsPerFile + 25, json(42));
  add_records(a, junk);
  const MergedRun m = merge_shards({a});
  EXPECT_EQ(std::count_if(m.problems.begin(), m.problems.end(),
                          [](const auto& p) { return p.find("not a finding") != p.npos; }),
            static_cast<long>(kMaxProblemsPerFile));
  EXPECT_TRUE(mentions(m.problems, "s0/findings.jsonl: 25 more lines that are no findings of shard 0 of 1"));
}

TEST(Merge, AMergeOfAPartialMergeStaysPartial) {
  ShardOutput earlier = shard(0, 1, 5);
  earlier.summary.partial = {"x/run.json: shard 1 of 2 was interrupted after 3 cases"};
  const MergedRun m = merge_shards({earlier});
  EXPECT_EQ(m.problems, earlier.summary.partial);
  EXPECT_EQ(m.summary.partial, earlier.summary.partial);
}

TEST(Merge, RunJsonRefusesShardsOutOfRange) {
  auto message = [](int index, int total) {
    RunSummary r;
    r.shard = {index, total};
    try {
      run_summary_from_json(to_json(r));
    } catch (const program::JsonError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(message(0, 1), "read");
  EXPECT_NE(message(0, -3).find("shard.total -3 must be between 1 and 1000000"), std::string::npos);
  EXPECT_NE(message(0, 2000000000).find("shard.total 2000000000 must be between 1 and 1000000"), std::string::npos);
  EXPECT_NE(message(2, 2).find("shard.index 2 must be below shard.total (2)"), std::string::npos);
  EXPECT_NE(message(-1, 2).find("shard.index -1"), std::string::npos);
}

}  // namespace
}  // namespace parity::reports
