// reports/: findings and run summaries round-trip, the JSONL file survives a crash mid-line, known divergences
// match by pattern, version range and date, and a broken known-divergences file is refused clearly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <fstream>

#include "files/error.h"
#include "judge/coverage.h"
#include "program/json.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "reports/known_divergences.h"
#include "reports/run_summary.h"
#include "reports/schema_version.h"
#include "tests/support/temp_dir.h"

namespace parity::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A signature written as findings.jsonl writes it.
judge::Signature sig(std::string_view text) { return judge::Signature::parse(text).value(); }

// A temporary folder named for these tests.
class TempDir : public parity::testing::TempDir {
 public:
  TempDir() : parity::testing::TempDir("parity-reports") {}
};

Finding sample_finding() {
  Finding f;
  f.parity_commit = "abc123";
  f.generator_version = 1;
  f.libtorch_version = "1.13.0";
  f.seed = (std::uint64_t{1} << 60) + 3;
  f.case_index = 17;
  f.case_seed = 99;
  f.size = 40;
  f.signature = sig("transpose:strides");
  f.original_program_size = 9;
  f.shrink_evaluations = 12;
  program::Step r;
  r.op = program::OpId::Rand;
  r.attrs.sizes = {2, 3};
  r.attrs.strides = {3, 1};
  f.program.steps.push_back(r);
  f.divergence = {0, 0, judge::DivergenceKind::Strides, "[1, 2]", "[3, 1]", judge::Divergence::Severity::Major, {}, {}};
  judge::Trace t;
  t.backend = "impl";
  t.steps.resize(1);
  f.impl_trace = t;
  t.backend = "libtorch";
  f.oracle_trace = t;
  return f;
}

TEST(ReportsFinding, RoundTrips) {
  Finding f = sample_finding();
  json j = to_json(f);
  EXPECT_EQ(j["kind"], "finding");
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_TRUE(j["seed"].is_string());  // above 2^53
  EXPECT_EQ(finding_from_json(json::parse(j.dump())), f);
  f.impl_trace.reset();
  f.oracle_trace.reset();
  f.expected = true;
  f.known_reason = "a reason";
  EXPECT_EQ(finding_from_json(to_json(f)), f);
}

// What judged impl travels with the finding (a replay runs the same oracle); a finding written before the field
// existed was judged by LibTorch.
TEST(ReportsFinding, KeepsItsOracle) {
  Finding f = sample_finding();
  EXPECT_EQ(to_json(f)["oracle"], "libtorch");
  f.oracle = Oracle::ImplCpu;
  json j = to_json(f);
  EXPECT_EQ(j["oracle"], "impl-cpu");
  EXPECT_EQ(finding_from_json(j).oracle, Oracle::ImplCpu);
  j.erase("oracle");
  j["schema_version"] = 5;
  EXPECT_EQ(finding_from_json(j).oracle, Oracle::LibTorch);
  j["oracle"] = "numpy";
  try {
    finding_from_json(j);
    ADD_FAILURE() << "an unknown oracle was read";
  } catch (const program::JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("\"oracle\" must be \"libtorch\" or \"impl-cpu\""), std::string::npos)
        << e.what();
  }
}

TEST(ReportsFinding, RefusesBrokenFindings) {
  json j = to_json(sample_finding());
  j["kind"] = "run";
  EXPECT_THROW(finding_from_json(j), program::JsonError);
  j = to_json(sample_finding());
  j["program"]["steps"][0]["op"] = "nope";
  try {
    finding_from_json(j);
    ADD_FAILURE();
  } catch (const program::JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op"), std::string::npos) << e.what();
  }
  j = to_json(sample_finding());
  j.erase("divergence");
  EXPECT_THROW(finding_from_json(j), program::JsonError);
  j = to_json(sample_finding());
  j["schema_version"] = kReportSchemaVersion + 1;
  EXPECT_THROW(finding_from_json(j), program::JsonError);
}

TEST(ReportsRunSummary, RoundTrips) {
  RunSummary r;
  r.libtorch_version = "1.13.0";
  r.parity_commit = "abc";
  r.generator_version = 1;
  r.seed = 5;
  r.seconds = 1.5;
  r.cases = 30;
  r.cases_per_second = 20;
  r.findings = 4;
  r.unexpected_findings = 3;
  r.expected_findings = 1;
  r.recorded_findings = 2;
  r.crashes = 1;
  r.planted_faults = {"mul=values"};
  r.groups[sig("add:values")].add_case(7);
  r.groups[sig("add:values")].add_case(3);
  r.groups[sig("add:values")].offer(3, sample_finding().program);
  r.groups[sig("program:crash")].add_case(12);  // a group whose findings were not recorded has no smallest program
  r.findings_by_kind = {{judge::DivergenceKind::Values, 3}, {judge::DivergenceKind::Crash, 1}};
  r.ops = {{"add", {10, 8, 1, 1}}};
  r.error_categories = {{"shape", 2}};
  r.known_divergence_hits = {{"expand:status:argument", 1}, {"never:matched", 0}};
  r.coverage = Coverage::zeroed();
  r.coverage.ops["add"] = 8;
  r.coverage.situations["version_error"] = 3;
  r.coverage.error_categories["unclassified"] = 1;  // a key no campaign aims at is kept too
  r.coverage.role_triples["saved@leaf+backward@leaf+backward@view"] = 2;  // met, though no goal
  r.coverage.op_operands["mul_:shared_storage"] = 5;
  r.shard = {1, 4};
  r.max_steps = 14;
  r.timeout_ms = 10000;
  r.interrupted = true;
  json j = to_json(r);
  EXPECT_EQ(j["kind"], "run");
  EXPECT_EQ(j["shard"]["total"], 4);
  EXPECT_EQ(run_summary_from_json(json::parse(j.dump())), r);
  for (const char* dim :
       {"ops", "layouts", "memory_formats", "dtypes", "error_categories", "situations", "situation_pairs",
        "backward_through", "role_pairs", "role_triples", "op_operands"})
    EXPECT_TRUE(j["coverage"][dim].is_object()) << dim;
  EXPECT_EQ(j["coverage"]["op_operands"], json({{"mul_:shared_storage", 5}})) << "only what was met: no goal";
  EXPECT_EQ(j["coverage"]["situations"]["version_error"], 3);
  EXPECT_EQ(j["coverage"]["situations"]["data_of_tensor"], 0);
  EXPECT_EQ(j["coverage"]["role_triples"]["saved@leaf+backward@leaf+backward@view"], 2);
  EXPECT_EQ(j["coverage"]["role_pairs"]["retain_grad@view+write_on_tensor@nonleaf"], 0);  // a goal, at 0
  EXPECT_EQ(j["coverage"]["role_pairs"].size(), judge::role_pair_goals().size());
  EXPECT_EQ(j["coverage"]["starved"], json(starved(r.coverage)));
  EXPECT_EQ(j["known_divergence_hits"]["never:matched"], 0);
  EXPECT_EQ(j["device"], "cpu");
  ASSERT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["groups"][0]["signature"], "add:values");  // the most frequent first
  EXPECT_EQ(j["groups"][0]["first_case"], 3);
  EXPECT_EQ(j["groups"][0]["smallest"]["steps"], 1);
  EXPECT_TRUE(j["groups"][1]["smallest"].is_null());
}

TEST(ReportsRunSummary, KeepsItsOracle) {
  RunSummary r;
  r.device = "cuda";
  r.oracle = Oracle::ImplCpu;
  json j = to_json(r);
  EXPECT_EQ(j["oracle"], "impl-cpu");
  EXPECT_EQ(run_summary_from_json(json::parse(j.dump())), r);
  j.erase("oracle");
  j["schema_version"] = 5;
  EXPECT_EQ(run_summary_from_json(j).oracle, Oracle::LibTorch);
}

TEST(ReportsRunSummary, RefusesSchemaVersionsItCannotRead) {
  RunSummary r;
  json j = to_json(r);
  j["schema_version"] = 1;  // before groups
  try {
    run_summary_from_json(j);
    ADD_FAILURE();
  } catch (const program::JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("older parity"), std::string::npos) << e.what();
  }
  j["schema_version"] = kReportSchemaVersion + 1;
  EXPECT_THROW(run_summary_from_json(j), program::JsonError);
  // A finding of schema 1 (no planted_faults) is still read: its program can be replayed.
  json f = to_json(sample_finding());
  f["schema_version"] = 1;
  f.erase("planted_faults");
  EXPECT_EQ(finding_from_json(f), sample_finding());
}

TEST(ReportsFindingGroup, KeepsTheFirstCaseAndTheSmallestRecordedProgram) {
  program::Program one = sample_finding().program, two = one;
  two.steps.push_back(two.steps[0]);
  FindingGroup g;
  g.add_case(40);
  g.offer(40, two);
  g.add_case(9);
  g.offer(9, two);
  g.add_case(50);
  g.offer(50, one);
  EXPECT_EQ(g.count, 3u);
  EXPECT_EQ(g.first_case, 9u);
  ASSERT_TRUE(g.smallest);
  EXPECT_EQ(g.smallest->case_index, 50u);
  EXPECT_EQ(g.smallest->program, one);
  // Ties go to the earlier case.
  g.offer(45, one);
  EXPECT_EQ(g.smallest->case_index, 45u);

  FindingGroup other;
  other.add_case(2);
  other.offer(2, two);
  other.expected = true;
  other.known_reason = "why";
  g.merge(other);
  EXPECT_EQ(g.count, 4u);
  EXPECT_EQ(g.first_case, 2u);
  EXPECT_EQ(g.smallest->case_index, 45u);
  EXPECT_TRUE(g.expected);
  EXPECT_EQ(g.known_reason, "why");
}

TEST(ReportsCoverage, ZeroedHasEveryExpectedKeyAndStarvedNamesThem) {
  Coverage c = Coverage::zeroed();
  std::size_t expected = 0;
  for (const auto& dim : judge::coverage_dimensions()) expected += dim.keys.size();
  std::vector<std::string> all = starved(c);
  EXPECT_EQ(all.size(), expected);
  EXPECT_EQ(c.situations.size(), judge::all_situations().size());
  EXPECT_EQ(c.ops.size(), judge::op_names().size());  // to_device is asked only of campaigns on cuda
  // "channels_last" is both a layout kind and a memory format: the dimension tells them apart.
  EXPECT_NE(std::find(all.begin(), all.end(), "layouts.channels_last"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "memory_formats.channels_last"), all.end());
  EXPECT_EQ(all.front(), "ops." + std::string(program::op_table().front().name));  // report order

  c.layouts["channels_last"] = 1;
  c.situations.erase("version_error");  // a missing key is as starved as a zero one
  std::vector<std::string> left = starved(c);
  EXPECT_EQ(left.size(), expected - 1);
  EXPECT_EQ(std::find(left.begin(), left.end(), "layouts.channels_last"), left.end());
  EXPECT_NE(std::find(left.begin(), left.end(), "situations.version_error"), left.end());
}

TEST(ReportsCoverage, ReadingChecksTheBlock) {
  RunSummary r;
  r.coverage = Coverage::zeroed();
  json j = to_json(r);
  auto error_of = [](const json& broken) -> std::string {
    try {
      run_summary_from_json(broken);
    } catch (const program::JsonError& e) {
      return e.what();
    }
    return "";
  };
  json b = j;
  b.erase("coverage");
  EXPECT_NE(error_of(b).find("missing field \"coverage\""), std::string::npos) << error_of(b);
  b = j;
  b["coverage"].erase("situations");
  EXPECT_NE(error_of(b).find("coverage: missing field \"situations\""), std::string::npos) << error_of(b);
  b = j;
  b["coverage"]["layouts"]["offset"] = -1;
  EXPECT_NE(error_of(b).find("coverage.layouts.offset"), std::string::npos) << error_of(b);
  b = j;
  b["coverage"] = json::array();
  EXPECT_NE(error_of(b).find("\"coverage\" must be an object"), std::string::npos) << error_of(b);
  b = j;
  b["coverage"]["op_operands"]["mul_:shared_storage"] = "five";
  EXPECT_NE(error_of(b).find("op_operands"), std::string::npos) << error_of(b);
  // Version 11 had no op_operands: read as none met.
  b = j;
  b["coverage"].erase("op_operands");
  b["schema_version"] = 11;
  EXPECT_EQ(error_of(b), "");
  EXPECT_TRUE(run_summary_from_json(b).coverage.op_operands.empty());
}

TEST(ReportsJsonl, AppendsDurableLinesAndToleratesATornTail) {
  TempDir dir;
  fs::path file = dir.path() / "sub" / "findings.jsonl";
  {
    JsonlWriter w(file);
    w.append({{"n", 1}});
    w.append({{"n", 2}});
  }
  // A crash mid-write leaves a partial line.
  std::ofstream(file, std::ios::app) << R"({"n": 3, "trunc)";
  JsonlContents c = read_jsonl(file);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(c.records[1]["n"], 2);
  // The next writer cuts the torn line off, so its records start on a line of their own.
  {
    JsonlWriter w(file);
    w.append({{"n", 4}});
  }
  c = read_jsonl(file);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_FALSE(c.torn_tail);
  EXPECT_EQ(c.records[2]["n"], 4);
}

TEST(ReportsJsonl, AMalformedMiddleLineIsAnError) {
  TempDir dir;
  fs::path file = dir.path() / "f.jsonl";
  std::ofstream(file) << "{\"n\": 1}\n{oops}\n{\"n\": 2}\n";
  try {
    read_jsonl(file);
    ADD_FAILURE();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("f.jsonl:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_jsonl(dir.path() / "missing.jsonl"), files::FileError);
  EXPECT_THROW(read_jsonl(dir.path()), files::FileError);
}

TEST(ReportsKnown, GlobAndVersions) {
  EXPECT_TRUE(glob_match("add:values", "add:values"));
  EXPECT_FALSE(glob_match("add:values", "add:value"));
  EXPECT_TRUE(glob_match("*:strides_size1", "clone:strides_size1"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYbc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYYb"));
  EXPECT_TRUE(glob_match("transpose:*:index_range", "transpose:status:index_range"));
  EXPECT_LT(compare_versions("1.13.0", "1.13.1"), 0);
  EXPECT_EQ(compare_versions("2.1", "2.1.0+cpu"), 0);
  EXPECT_GT(compare_versions("2.10.0", "2.9.1"), 0);
  EXPECT_EQ(today_utc().size(), 10u);
}

TEST(ReportsKnown, MatchesBySignatureVersionAndDate) {
  json j = {{"schema_version", 1},
            {"entries",
             {{{"signature", "*:strides_size1"}, {"reason", "size-1 strides differ on 1.13"},
               {"libtorch_min", "1.13.0"}, {"libtorch_max", "1.13.1"}, {"expires", "2099-01-01"}},
              {{"signature", "add:values"}, {"reason", "old"}, {"expires", "2001-01-01"}}}}};
  KnownDivergences k = KnownDivergences::from_json(j, "known.json");
  ASSERT_EQ(k.entries().size(), 2u);
  EXPECT_NE(k.match(sig("clone:strides_size1"), "1.13.0", "2024-05-01"), nullptr);
  EXPECT_EQ(k.match(sig("clone:strides_size1"), "2.0.0", "2024-05-01"), nullptr);
  EXPECT_EQ(k.match(sig("clone:strides"), "1.13.0", "2024-05-01"), nullptr);
  EXPECT_EQ(k.match(sig("add:values"), "1.13.0", "2024-05-01"), nullptr);  // expired
  EXPECT_NE(k.match(sig("add:values"), "1.13.0", "2001-01-01"), nullptr);  // last day
  EXPECT_EQ(k.expired("2024-05-01").size(), 1u);
}

TEST(ReportsKnown, RefusesBrokenFiles) {
  auto error_of = [](json j) -> std::string {
    try {
      KnownDivergences::from_json(j, "reports/known.json");
    } catch (const ReportError& e) {
      return e.what();
    }
    return "";
  };
  json entry = {{"signature", "add:values"}, {"reason", "r"}, {"expires", "2030-01-01"}};
  EXPECT_EQ(error_of({{"schema_version", 1}, {"entries", {entry}}}), "");
  EXPECT_NE(error_of(json::array()).find("reports/known.json"), std::string::npos);
  EXPECT_NE(error_of({{"schema_version", 2}, {"entries", json::array()}}).find("schema_version"), std::string::npos);
  EXPECT_NE(error_of({{"schema_version", 1}}).find("entries"), std::string::npos);
  json e = entry;
  e.erase("reason");
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("entry 0"), std::string::npos);
  e = entry;
  e["expires"] = "2030-13-01";
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("YYYY-MM-DD"), std::string::npos);
  e = entry;
  e["expires"] = "2030-02-30";
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("expires"), std::string::npos);
  e = entry;
  e["libtorch_min"] = "one";
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("libtorch_min"), std::string::npos);
  e = entry;
  e["libtorch_min"] = "2.0";
  e["libtorch_max"] = "1.13";
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("above"), std::string::npos);
  e = entry;
  e["signatur"] = "x";
  EXPECT_NE(error_of({{"schema_version", 1}, {"entries", {e}}}).find("unknown field"), std::string::npos);
}

// The first entry in force matches, so a second of one signature over the same versions never would: refused,
// while entries of one signature over disjoint version ranges (a divergence 1.13 and 2.x explain differently) load.
TEST(ReportsKnown, RefusesASignatureTwiceOverTheSameVersions) {
  auto entry = [](std::optional<std::string> min, std::optional<std::string> max) {
    json e = {{"signature", "add:values"}, {"reason", "r"}, {"expires", "2030-01-01"}};
    if (min) e["libtorch_min"] = *min;
    if (max) e["libtorch_max"] = *max;
    return e;
  };
  auto loads = [](json a, json b) {
    try {
      KnownDivergences::from_json({{"schema_version", 1}, {"entries", {a, b}}}, "known.json");
      return std::string();
    } catch (const ReportError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(loads(entry({}, {}), entry({}, {})).find("entry 0 has this signature too"), std::string::npos);
  EXPECT_NE(loads(entry("1.13.0", "2.1"), entry("2.1", {})).find("entry 1"), std::string::npos);
  EXPECT_NE(loads(entry({}, "1.13.1"), entry("1.13.1", "1.13.1")), "");
  EXPECT_EQ(loads(entry({}, "1.13.1"), entry("2.0", {})), "");
  EXPECT_EQ(loads(entry("2.0", {}), entry({}, "1.13.1")), "");
  json other = entry({}, {});
  other["signature"] = "mul:values";
  EXPECT_EQ(loads(entry({}, {}), other), "");
}

TEST(ReportsKnown, TheReviewedFileLoads) {
  KnownDivergences k = KnownDivergences::load(fs::path(PARITY_SOURCE_DIR) / "reports" / "known_divergences.json");
  for (const auto& e : k.entries()) EXPECT_FALSE(e.reason.empty());
  TempDir dir;
  std::ofstream(dir.path() / "k.json") << "{\"schema_version\": 1, \"entries\": [";
  try {
    KnownDivergences::load(dir.path() / "k.json");
    ADD_FAILURE();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("k.json:1:35: malformed JSON: syntax error"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity::reports
