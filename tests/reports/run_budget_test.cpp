// run.json's budget (the --cases and --seconds a campaign was asked for): written, read back, absent from older
// records, and the share of a case budget each shard runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "program/json.h"
#include "reports/run_summary.h"

namespace parity::reports {
namespace {

using nlohmann::json;

TEST(RunBudget, RoundTripsEitherOrBothBudgets) {
  for (const Budget& b : {Budget{2000, std::nullopt}, Budget{std::nullopt, 12.5}, Budget{7, 60.0}}) {
    RunSummary r;
    r.budget = b;
    const json j = to_json(r);
    EXPECT_EQ(j["budget"]["cases"].is_null(), !b.cases);
    EXPECT_EQ(j["budget"]["seconds"].is_null(), !b.seconds);
    EXPECT_EQ(run_summary_from_json(json::parse(j.dump())).budget, b);
  }
  RunSummary huge;
  huge.budget.cases = std::uint64_t{1} << 62;  // above 2^53: a decimal string, as every u64 in the records
  EXPECT_EQ(to_json(huge)["budget"]["cases"], "4611686018427387904");
  EXPECT_EQ(run_summary_from_json(to_json(huge)).budget, huge.budget);
}

TEST(RunBudget, AVersion4RunReadsAsAnUnknownBudget) {
  RunSummary r;
  r.budget = {100, 5.0};
  json j = to_json(r);
  j.erase("budget");
  j["schema_version"] = 4;
  EXPECT_EQ(run_summary_from_json(j).budget, Budget{});
}

TEST(RunBudget, RefusesMalformedBudgets) {
  const json good = to_json(RunSummary{});
  auto refused = [&](auto mutate) {
    json j = good;
    mutate(j);
    try {
      run_summary_from_json(j);
    } catch (const program::JsonError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused([](json& j) { j["budget"] = 5; }).find("\"budget\" must be an object"), std::string::npos);
  EXPECT_NE(refused([](json& j) { j["budget"].erase("seconds"); }).find("missing field \"seconds\""), std::string::npos);
  EXPECT_NE(refused([](json& j) { j["budget"]["cases"] = -3; }).find("budget"), std::string::npos);
  EXPECT_NE(refused([](json& j) { j["budget"]["seconds"] = -1.0; }).find("must not be negative"), std::string::npos);
}

TEST(RunBudget, CasesInShardShareOutTheIndicesBelowTheBudget) {
  EXPECT_EQ(cases_in_shard(10, {0, 1}), 10u);
  EXPECT_EQ(cases_in_shard(10, {0, 3}), 4u);  // 0, 3, 6, 9
  EXPECT_EQ(cases_in_shard(10, {1, 3}), 3u);  // 1, 4, 7
  EXPECT_EQ(cases_in_shard(10, {2, 3}), 3u);  // 2, 5, 8
  EXPECT_EQ(cases_in_shard(3, {4, 5}), 0u);   // no index below 3 is 4 mod 5
  EXPECT_EQ(cases_in_shard(0, {0, 1}), 0u);
}

}  // namespace
}  // namespace parity::reports
