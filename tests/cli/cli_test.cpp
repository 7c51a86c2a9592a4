// The `parity` binary, run as a person or CI would: bad input gives one "parity: error:" line and exit code 2,
// never a crash; `list` shows the op table; a short campaign writes its summary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "engine/device_probe.h"
#include "impl/autograd/derivatives.h"
#include "judge/coverage.h"
#include "oracle/torch_backend.h"
#include "program/json.h"
#include "program/op_table.h"
#include "reports/schema_version.h"
#include "tests/support/temp_dir.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs parity with a time limit, so that a hang fails the test instead of stalling the suite. Sharding
// variables of whoever runs this test are not passed on; `env` sets the ones a test wants.
Result parity(const std::string& args, int timeout_s = 120, const std::string& env = "") {
  std::string cmd = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u TEST_TOTAL_SHARDS -u TEST_SHARD_INDEX "
                    "-u TEST_SHARD_STATUS_FILE -u PARITY_PLANT " + env + " timeout -s KILL " + std::to_string(timeout_s) + " " +
                    shell_quote(PARITY_CLI_PATH) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

class Cli : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // One error line, the right prefix, exit code 2, and no sign of a crash.
  static void expect_bad_input(const Result& r, std::string_view fragment) {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.output.rfind("parity: error: ", 0), 0u) << r.output;
    EXPECT_NE(r.output.find(fragment), std::string::npos) << "missing \"" << fragment << "\" in: " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
  static std::string valid_program() {
    return R"({"schema_version": 1, "steps": [
      {"op": "rand", "inputs": [], "grad_enabled": true,
       "attrs": {"sizes": [2, 3], "strides": [3, 1], "offset": 0, "dtype": "float32", "requires_grad": true, "seed": 5}},
      {"op": "transpose", "inputs": [0], "attrs": {"dim": 0, "dim1": 1}}]})";
  }
  parity::testing::TempDir tmp_{"parity-cli"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(Cli, MalformedJson) {
  expect_bad_input(parity("run " + write("bad.json", "{ \"schema_version\": 1, steps: [] }")), "malformed JSON");
  expect_bad_input(parity("run " + write("empty.json", "")), "malformed JSON");
  expect_bad_input(parity("run " + write("binary.json", std::string("\x00\xff\xfe{", 4))), "malformed JSON");
  expect_bad_input(parity("replay " + write("bad2.json", "[1, 2,, 3]")), "malformed JSON");
}

// A program with no step runs nothing and would agree: run, replay and replay --all refuse it.
TEST_F(Cli, AProgramWithNoStepIsRefused) {
  const std::string empty = write("nothing.json", R"({"schema_version": 1, "steps": []})");
  expect_bad_input(parity("run " + empty), "the program has no step");
  expect_bad_input(parity("replay " + empty), "the program has no step");
  expect_bad_input(parity("replay --all " + empty), "the program has no step");
}

TEST_F(Cli, TruncatedJson) {
  std::string text = valid_program();
  expect_bad_input(parity("run " + write("cut.json", text.substr(0, text.size() / 2))), "malformed JSON");
}

TEST_F(Cli, UnknownOp) {
  std::string text = valid_program();
  text.replace(text.find("transpose"), 9, "transmogrify");
  Result r = parity("run " + write("op.json", text));
  expect_bad_input(r, "unknown op \"transmogrify\"");
  EXPECT_NE(r.output.find("step 1"), std::string::npos);
  EXPECT_NE(r.output.find("parity list"), std::string::npos);
}

TEST_F(Cli, AbsurdShape) {
  std::string text = valid_program();
  text.replace(text.find("[2, 3]"), 6, "[100000000, 100000000]");
  expect_bad_input(parity("run " + write("huge.json", text)), "absurd");
  text = valid_program();
  text.replace(text.find("[3, 1]"), 6, "[9223372036854775807, 1]");
  expect_bad_input(parity("run " + write("stride.json", text)), "absurd");
}

TEST_F(Cli, HostileJson) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_bad_input(parity("run " + write("deep.json", R"({"schema_version": 1, "steps": )" + deep + "}")),
                   "nested deeper than");
  std::string text = valid_program();
  text.replace(text.find("\"schema_version\": 1"), 19, "\"schema_version\": 99");
  expect_bad_input(parity("run " + write("future.json", text)), "newer");
  expect_bad_input(parity("run " + write("array.json", "[]")), "object");
}

TEST_F(Cli, MissingFile) {
  expect_bad_input(parity("run " + (dir_ / "nope.json").string()), "nope.json");
  expect_bad_input(parity("replay " + (dir_ / "nope.jsonl").string()), "cannot read");
  expect_bad_input(parity("fuzz --cases 1 --known " + (dir_ / "nope-known.json").string()), "cannot read");
}

TEST_F(Cli, UnreadablePath) {
  // A folder is unreadable as a file for everyone, root included.
  expect_bad_input(parity("run " + dir_.string()), "is a folder");
  if (::geteuid() != 0) {
    std::string p = write("secret.json", valid_program());
    fs::permissions(p, fs::perms::none);
    expect_bad_input(parity("run " + p), "cannot read");
  }
  // An output folder that cannot be created.
  std::string file = write("plain-file", "x");
  expect_bad_input(parity("fuzz --cases 1 --out " + file + "/sub"), "plain-file");
}

TEST_F(Cli, UnknownFlagAndBadNumbers) {
  expect_bad_input(parity("fuzz --frobnicate"), "unknown flag \"--frobnicate\"");
  expect_bad_input(parity("fuzz --cases ten"), "--cases");
  expect_bad_input(parity("fuzz --seconds 1x"), "--seconds");
  expect_bad_input(parity("fuzz --seed -3"), "--seed");
  expect_bad_input(parity("fuzz --seed 99999999999999999999999"), "--seed");
  expect_bad_input(parity("fuzz --cases"), "needs a value");
  expect_bad_input(parity("replay x.json --index many"), "--index");
  expect_bad_input(parity("run"), "PROGRAM.json");
  expect_bad_input(parity("list extra"), "no arguments");
  expect_bad_input(parity("claims extra"), "no positional arguments");
  expect_bad_input(parity("claims --json --markdown"), "exclude each other");
  expect_bad_input(parity("claims --only no-such-claim"), "no-such-claim");
  expect_bad_input(parity("frobnicate"), "unknown command");
  expect_bad_input(parity(""), "no command");
  expect_bad_input(parity("fuzz --cases 1", 120, "GTEST_SHARD_INDEX=3 GTEST_TOTAL_SHARDS=2"), "GTEST_SHARD_INDEX");
  expect_bad_input(parity("fuzz --cases 1", 120, "TEST_TOTAL_SHARDS=x TEST_SHARD_INDEX=0"), "TEST_TOTAL_SHARDS");
}

TEST_F(Cli, BadKnownDivergences) {
  std::string known = write("known.json", R"({"schema_version": 1, "entries": [{"signature": "add:values"}]})");
  Result r = parity("fuzz --cases 1 --out " + (dir_ / "o").string() + " --known " + known);
  expect_bad_input(r, "known.json");
  EXPECT_NE(r.output.find("reason"), std::string::npos);
}

TEST_F(Cli, Help) {
  for (std::string cmd : {"--help", "fuzz --help", "replay --help", "run --help", "list --help", "claims --help"}) {
    Result r = parity(cmd);
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.output.find("usage: parity"), std::string::npos) << cmd;
  }
}

TEST_F(Cli, ListShowsEveryOp) {
  Result r = parity("list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& op : program::op_table()) {
    std::string line_start = "\n" + std::string(op.name) + " ";
    EXPECT_TRUE(("\n" + r.output).find(line_start) != std::string::npos) << op.name;
  }
  EXPECT_EQ(static_cast<std::size_t>(std::count(r.output.begin(), r.output.end(), '\n')), program::op_table().size());
}

// One Markdown row per backward node, in the table's order, with what it saves in save order.
TEST_F(Cli, ListDerivativesShowsEveryNode) {
  Result r = parity("list --derivatives");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::size_t at = 0;
  for (const auto& row : impl::autograd::derivatives()) {
    std::string saved;
    for (std::string_view s : row.saved) saved += (saved.empty() ? "" : ", ") + std::string(s);
    const std::string start = "\n| `" + std::string(row.name) + "` | " + std::string(row.ops) + " | " + saved + " |";
    const std::size_t found = r.output.find(start, at);
    ASSERT_NE(found, std::string::npos) << row.name;
    at = found + 1;
  }
  EXPECT_EQ(parity("list --derivatives --version-gates").exit_code, 2);
}

TEST_F(Cli, ShortCampaignWritesItsSummary) {
  fs::path out = dir_ / "campaign";
  Result r = parity("fuzz --cases 20 --seed 1 --out " + out.string(), 600);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  ASSERT_TRUE(fs::exists(out / "run.json")) << r.output;
  nlohmann::json run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  EXPECT_EQ(run["kind"], "run");
  EXPECT_EQ(run["schema_version"], reports::kReportSchemaVersion);
  EXPECT_EQ(run["cases"], 20);
  EXPECT_EQ(run["seed"], 1);
  EXPECT_EQ(run["shard"]["total"], 1);
  EXPECT_EQ(r.exit_code, run["unexpected_findings"].get<int>() > 0 ? 1 : 0);
  std::uint64_t generated = 0;
  for (const auto& [name, counts] : run["ops"].items()) generated += counts["generated"].get<std::uint64_t>();
  EXPECT_GT(generated, 0u);
  // Coverage: every expected key is present, starved ones at 0 and listed; one line says so at the end.
  const nlohmann::json& coverage = run["coverage"];
  std::vector<std::string> zero;
  for (const auto& dim : judge::coverage_dimensions())
    for (const auto& key : dim.keys) {
      const nlohmann::json& counts = coverage[std::string(dim.name)];
      ASSERT_TRUE(counts.contains(key)) << dim.name << "." << key;
      if (counts[key] == 0) zero.push_back(std::string(dim.name) + "." + key);
    }
  EXPECT_EQ(coverage["starved"].get<std::vector<std::string>>(), zero);
  std::uint64_t ok = 0, covered_ok = 0;
  for (const auto& [name, counts] : run["ops"].items()) ok += counts["ok"].get<std::uint64_t>();
  for (const auto& [name, n] : coverage["ops"].items()) covered_ok += n.get<std::uint64_t>();
  EXPECT_EQ(covered_ok, ok);
  EXPECT_GT(coverage["layouts"]["contiguous"].get<std::uint64_t>(), 0u);
  auto line = r.output.find("\ncoverage: ");
  ASSERT_NE(line, std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" situations, ", line), std::string::npos) << r.output;
  // Every recorded finding is a complete line that replays.
  if (fs::exists(out / "findings.jsonl")) {
    std::ifstream in(out / "findings.jsonl");
    std::string line;
    int index = 0;
    while (std::getline(in, line)) {
      nlohmann::json f = nlohmann::json::parse(line);
      EXPECT_EQ(f["kind"], "finding");
      Result replay = parity("replay " + (out / "findings.jsonl").string() + " --index " + std::to_string(index++));
      EXPECT_TRUE(replay.exit_code == 0 || replay.exit_code == 1) << replay.output;
    }
  }
}

// A flaky finding says so when replayed: one replay that agrees (or diverges) proves little about it.
TEST_F(Cli, ReplayOfAFlakyFindingSaysItIsFlaky) {
  const fs::path out = dir_ / "flaky";
  Result r = parity("fuzz --cases 120 --seed 7 --isolation fork --out " + out.string(), 600, "PARITY_PLANT=mul=flaky");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::ifstream in(out / "findings.jsonl");
  std::string line;
  int index = 0, flaky = 0;
  while (std::getline(in, line)) {
    const nlohmann::json f = nlohmann::json::parse(line);
    Result replay = parity("replay " + (out / "findings.jsonl").string() + " --index " + std::to_string(index++), 120,
                           "PARITY_PLANT=mul=flaky");
    const bool is_flaky = f["reproducible"].is_object() && f["reproducible"]["flaky"] == true;
    flaky += is_flaky;
    EXPECT_EQ(replay.output.find("this finding is flaky") != std::string::npos, is_flaky) << replay.output;
  }
  EXPECT_GT(flaky, 0);
}

TEST_F(Cli, RequireCoverageFailsOnStarvedItems) {
  fs::path out = dir_ / "starved";
  // Two cases cannot reach every situation: each starved item is named on stderr, and the exit status says so.
  Result r = parity("fuzz --cases 2 --seed 1 --require-coverage --out " + out.string(), 600);
  nlohmann::json run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  auto starved = run["coverage"]["starved"].get<std::vector<std::string>>();
  ASSERT_FALSE(starved.empty());
  if (run["unexpected_findings"].get<int>() > 0) {
    EXPECT_EQ(r.exit_code, 1) << r.output;  // findings take precedence
  } else {
    EXPECT_EQ(r.exit_code, 3) << r.output;
  }
  for (const auto& item : starved) EXPECT_NE(r.output.find("  starved: " + item + "\n"), std::string::npos) << item;
  EXPECT_NE(r.output.find("--require-coverage: " + std::to_string(starved.size()) + " items were never exercised"),
            std::string::npos)
      << r.output;
  expect_bad_input(parity("fuzz --require-coverage=yes"), "takes no value");
  Result help = parity("fuzz --help");
  EXPECT_NE(help.output.find("--require-coverage"), std::string::npos);
  EXPECT_NE(help.output.find("  3  --require-coverage"), std::string::npos);
}

TEST_F(Cli, StrictKnownFailsOnStaleAndExpiredEntries) {
  // An entry in force that matches nothing, and one past its expiry: both are named, and the run fails with 4.
  std::string known = write("stale-known.json", R"({"schema_version": 1, "entries": [
    {"signature": "never:matches", "reason": "a test entry", "expires": "2999-01-01"},
    {"signature": "add:values", "reason": "an old entry", "expires": "2000-01-01"}]})");
  fs::path out = dir_ / "strict";
  Result r = parity("fuzz --cases 2 --seed 1 --strict-known --known " + known + " --out " + out.string(), 600);
  nlohmann::json run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  EXPECT_EQ(run["known_divergence_hits"]["never:matches"], 0) << run.dump();
  EXPECT_FALSE(run["known_divergence_hits"].contains("add:values"));  // expired: not in force
  EXPECT_EQ(r.exit_code, run["unexpected_findings"].get<int>() > 0 ? 1 : 4) << r.output;
  EXPECT_NE(r.output.find("known divergence \"never:matches\" matched no finding"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("known divergence \"add:values\" expired on 2000-01-01"), std::string::npos) << r.output;
  // Without the flag the same ledger is reported on but does not fail the run.
  Result lax = parity("fuzz --cases 2 --seed 1 --known " + known + " --out " + (dir_ / "lax").string(), 600);
  EXPECT_EQ(lax.exit_code, run["unexpected_findings"].get<int>() > 0 ? 1 : 0) << lax.output;
  EXPECT_NE(parity("fuzz --help").output.find("  4  --strict-known"), std::string::npos);
}

TEST_F(Cli, MergeJoinsShardsAndRefusesIncompleteSets) {
  const fs::path s0 = dir_ / "m0", s1 = dir_ / "m1", all = dir_ / "merged";
  ASSERT_LE(parity("fuzz --cases 20 --seed 4 --out " + s0.string(), 600, "GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0").exit_code, 1);
  ASSERT_LE(parity("fuzz --cases 20 --seed 4 --out " + s1.string(), 600, "GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1").exit_code, 1);
  Result r = parity("merge " + s0.string() + " " + s1.string() + " -o " + all.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json a = nlohmann::json::parse(std::ifstream(s0 / "run.json"));
  nlohmann::json b = nlohmann::json::parse(std::ifstream(s1 / "run.json"));
  nlohmann::json m = nlohmann::json::parse(std::ifstream(all / "run.json"));
  EXPECT_EQ(m["cases"], 20);
  EXPECT_EQ(m["cases"].get<int>(), a["cases"].get<int>() + b["cases"].get<int>());
  EXPECT_EQ(m["findings"].get<int>(), a["findings"].get<int>() + b["findings"].get<int>());
  EXPECT_EQ(m["shard"]["total"], 1);
  // A missing shard, another campaign, or an output folder already used: refused, nothing written.
  expect_bad_input(parity("merge " + s0.string() + " -o " + (dir_ / "half").string()), "shards missing: 1 (of 2)");
  EXPECT_FALSE(fs::exists(dir_ / "half" / "run.json"));
  expect_bad_input(parity("merge " + s0.string() + " " + s1.string() + " -o " + all.string()), "already holds a run");
  expect_bad_input(parity("merge " + s0.string()), "needs -o OUT");
}

TEST_F(Cli, FuzzRefusesAFolderHoldingACampaign) {
  const fs::path out = dir_ / "twice";
  ASSERT_LE(parity("fuzz --cases 3 --seed 1 --out " + out.string(), 600).exit_code, 1);
  std::ofstream(out / "findings.jsonl", std::ios::app) << "{}\n";  // stands for the first campaign's findings
  expect_bad_input(parity("fuzz --cases 3 --seed 2 --out " + out.string(), 600), "already holds a campaign's output");
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(out / "run.json"))["seed"], 1);  // untouched
  Result r = parity("fuzz --cases 3 --seed 2 --overwrite --out " + out.string(), 600);
  ASSERT_LE(r.exit_code, 1) << r.output;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(out / "run.json"))["seed"], 2);
  std::ifstream findings(out / "findings.jsonl");
  std::string first_line;
  std::getline(findings, first_line);
  EXPECT_NE(first_line, "{}");  // the old findings are gone, not mixed in
}

TEST_F(Cli, ShardsSplitTheCases) {
  fs::path out = dir_ / "shard";
  Result r = parity("fuzz --cases 8 --seed 2 --out " + out.string(), 600, "GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=1");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  nlohmann::json run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  EXPECT_EQ(run["cases"], 2);  // k = 1 and k = 5
  EXPECT_EQ(run["shard"]["index"], 1);
  EXPECT_EQ(run["shard"]["total"], 4);
}

TEST_F(Cli, RunAndReplayAProgram) {
  std::string program = write("p.json", valid_program());
  Result r = parity("run " + program);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  EXPECT_NE(r.output.find("transpose"), std::string::npos);
  EXPECT_NE(r.output.find("libtorch"), std::string::npos);
  Result replay = parity("replay " + program);
  ASSERT_TRUE(replay.exit_code == 0 || replay.exit_code == 1) << replay.output;
  EXPECT_TRUE(replay.output.rfind("agrees now", 0) == 0 || replay.output.rfind("still diverges: ", 0) == 0)
      << replay.output;
  EXPECT_EQ(replay.exit_code == 1, replay.output.rfind("still diverges: ", 0) == 0);
}

// The final summary lists the groups to triage first (the unexpected ones) before the ledger's, and says how many
// findings findings.jsonl holds, as it keeps only a few per group.
TEST_F(Cli, TheSummaryListsTheUnexpectedGroupsFirst) {
  Result r = parity("fuzz --cases 3000 --seed 1 --jobs 1 --out " + (dir_ / "planted").string(), 300,
                    "PARITY_PLANT=mul_=shared_storage");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(" recorded in findings.jsonl, at most 3 per group)"), std::string::npos) << r.output;
  std::istringstream lines(r.output);
  int unexpected = 0, expected = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  UNEXPECTED ", 0) == 0) {
      EXPECT_EQ(expected, 0) << "an unexpected group after an expected one:\n" << r.output;
      ++unexpected;
    }
    if (line.rfind("  expected ", 0) == 0) ++expected;
  }
  EXPECT_GT(unexpected, 0) << r.output;
}

// A replayed divergence that the ledger expects still diverges (exit 1), and the verdict names the entry.
TEST_F(Cli, ReplayNamesTheLedgerEntryThatExpectsTheDivergence) {
  const std::string program = write("p.json", valid_program());
  const std::string ledger = write("known.json", R"({"schema_version": 1, "entries": [
    {"signature": "transpose:values", "reason": "a test's entry", "expires": "2999-12-31"}]})");
  Result r = parity("replay " + program + " --known " + ledger, 120, "PARITY_PLANT=transpose=values");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("still diverges: transpose:values"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected: known divergence \"transpose:values\": a test's entry"), std::string::npos)
      << r.output;
  const std::string other = write("other.json", R"({"schema_version": 1, "entries": []})");
  r = parity("replay " + program + " --known " + other, 120, "PARITY_PLANT=transpose=values");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("expected: known divergence"), std::string::npos) << r.output;
}

// For CI: fuzz --junit writes a case for the campaign and one per group; replay --all replays a folder's findings
// as a regression suite, one verdict each, failing only on a divergence the ledger does not expect.
TEST_F(Cli, JUnitReportsAndReplayAllMakeARegressionSuite) {
  const fs::path out = dir_ / "planted", junit = dir_ / "fuzz.xml";
  Result r = parity("fuzz --cases 2000 --seed 1 --jobs 2 --out " + out.string() + " --junit " + junit.string(), 300,
                    "PARITY_PLANT=mul_=shared_storage");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::stringstream xml;
  xml << std::ifstream(junit).rdbuf();
  const nlohmann::json run = nlohmann::json::parse(std::ifstream(out / "run.json"));
  EXPECT_NE(xml.str().find("tests=\"" + std::to_string(run["groups"].size() + 1) + "\""), std::string::npos)
      << "a case per group and one for the campaign:\n" << xml.str();
  EXPECT_NE(xml.str().find("name=\"mul_:values\""), std::string::npos) << xml.str();
  EXPECT_NE(xml.str().find("<failure message="), std::string::npos) << xml.str();

  // Without the planted fault, its findings agree now; the ledger's still diverge, as expected: the suite passes.
  const fs::path replayed = dir_ / "replay.xml";
  r = parity("replay --all " + (out / "findings.jsonl").string() + " --junit " + replayed.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("still diverge as the ledger expects"), std::string::npos) << r.output;
  std::stringstream suite;
  suite << std::ifstream(replayed).rdbuf();
  EXPECT_NE(suite.str().find("failures=\"0\""), std::string::npos) << suite.str();
  // With it, they diverge again: the suite fails.
  r = parity("replay --all " + out.string(), 300, "PARITY_PLANT=mul_=shared_storage");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("[1/"), std::string::npos) << r.output;
  expect_bad_input(parity("replay --all " + out.string() + " --cpp"), "--all replays every finding");
  expect_bad_input(parity("replay " + (out / "findings.jsonl").string() + " --junit x.xml"), "give it with --all");
}

// A mistyped command, flag or op is refused with the closest known name; --version says which build this is.
TEST_F(Cli, SuggestsTheNameMeantAndSaysItsVersion) {
  expect_bad_input(parity("fuzzz"), "(did you mean \"fuzz\"?)");
  expect_bad_input(parity("fuzz --seconde 3"), "(did you mean \"--seconds\"?)");
  expect_bad_input(parity("fuzz --ops mull --cases 1"), "(did you mean \"mul\"?)");
  std::string program = valid_program();
  program.replace(program.find("\"transpose\""), 11, "\"transpos\"");
  expect_bad_input(parity("run " + write("typo.json", program)), "(did you mean \"transpose\"?)");
  Result v = parity("--version");
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.output.rfind("parity ", 0), 0u) << v.output;
  EXPECT_NE(v.output.find("\nLibTorch "), std::string::npos) << v.output;
  EXPECT_NE(v.output.find("report schema "), std::string::npos) << v.output;
}

// A repro asked of replay is all of stdout, so that `parity replay F --cpp > repro.cpp` is a program; the verdict
// goes to stderr. -o writes it to a file instead, one language at a time.
TEST_F(Cli, ReplaysReproIsAllOfStdoutOrItsOwnFile) {
  const std::string program = write("p.json", valid_program());
  const fs::path out = dir_ / "repro.cpp", err = dir_ / "stderr.txt";
  const int status = std::system((shell_quote(PARITY_CLI_PATH) + " replay " + program + " --cpp > " +
                                  shell_quote(out.string()) + " 2> " + shell_quote(err.string()))
                                     .c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << status;
  std::stringstream code, verdict;
  code << std::ifstream(out).rdbuf();
  verdict << std::ifstream(err).rdbuf();
  EXPECT_EQ(code.str().rfind("// parity repro", 0), 0u) << code.str().substr(0, 200);
  EXPECT_EQ(code.str().find("agrees now"), std::string::npos);
  EXPECT_TRUE(verdict.str().rfind("agrees now", 0) == 0 || verdict.str().rfind("still diverges: ", 0) == 0)
      << verdict.str();
  const fs::path py = dir_ / "repro.py";
  Result r = parity("replay " + program + " --python -o " + shell_quote(py.string()));
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  std::stringstream written;
  written << std::ifstream(py).rdbuf();
  EXPECT_EQ(written.str().rfind("# parity repro", 0), 0u) << written.str().substr(0, 200);
  EXPECT_EQ(r.output.find("# parity repro"), std::string::npos) << "the repro went to the file alone";
  expect_bad_input(parity("replay " + program + " --cpp --python -o x"), "give --cpp or --python");
}

// `parity claims`: every seed claim gets a LibTorch verdict from a program that ran as intended; the exit code
// says whether impl agrees on all of them.
TEST_F(Cli, ClaimsReportVerdicts) {
  Result r = parity("claims --json", 300);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  nlohmann::json out = nlohmann::json::parse(r.output);
  ASSERT_TRUE(out["claims"].is_array());
  ASSERT_FALSE(out["claims"].empty());
  int disagreements = 0;
  for (const auto& c : out["claims"]) {
    EXPECT_FALSE(c["id"].get<std::string>().empty());
    EXPECT_NE(c["source"].get<std::string>().find(".txt"), std::string::npos) << c["id"];
    EXPECT_TRUE(c["libtorch"]["ran_as_intended"].get<bool>()) << c.dump();
    EXPECT_FALSE(c["libtorch"]["observed"].get<std::string>().empty()) << c["id"];
    EXPECT_TRUE(c["libtorch"]["holds"].is_boolean());
    if (!c["agrees"].get<bool>()) ++disagreements;
  }
  EXPECT_EQ(out["summary"]["claims"].get<std::size_t>(), out["claims"].size());
  EXPECT_EQ(out["summary"]["impl_disagreements"].get<int>(), disagreements);
  EXPECT_EQ(r.exit_code, disagreements > 0 ? 1 : 0);

  Result one = parity("claims --markdown --only clone-gradient-flows");
  ASSERT_TRUE(one.exit_code == 0 || one.exit_code == 1) << one.output;
  EXPECT_EQ(one.output.rfind("| id | source |", 0), 0u) << one.output;
  EXPECT_NE(one.output.find("`clone-gradient-flows`"), std::string::npos) << one.output;
  EXPECT_NE(one.output.find("1 claim:"), std::string::npos) << one.output;
}

}  // namespace
// A planted campaign gives real findings; the report is built from whatever of the folder can be read.
TEST_F(Cli, ReportBuildsAPageFromWhatTheCampaignLeft) {
  const fs::path run = dir_ / "planted";
  Result r = parity("fuzz --cases 300 --seed 5 --out " + run.string(), 600, "PARITY_PLANT=mul=values");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("PARITY_PLANT is set"), std::string::npos) << r.output;
  nlohmann::json summary = nlohmann::json::parse(std::ifstream(run / "run.json"));
  EXPECT_EQ(summary["planted_faults"], nlohmann::json({"mul=values"}));
  ASSERT_GE(summary["groups"].size(), 1u);
  EXPECT_EQ(summary["groups"][0]["signature"], "mul:values");

  r = parity("report " + run.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream page(run / "report.html");
  std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find(">mul:values<"), std::string::npos);
  EXPECT_NE(html.find("Planted faults."), std::string::npos);

  // Killed mid-campaign: no run.json, a torn last line. Still a page, with both named.
  fs::remove(run / "run.json");
  std::ofstream(run / "findings.jsonl", std::ios::app) << "{\"schema_version\": 2, \"kind\": \"fin";
  r = parity("report " + run.string() + " -o " + (dir_ / "partial.html").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("torn line"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("run.json is missing"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "partial.html"));

  expect_bad_input(parity("report " + (dir_ / "nowhere").string()), "is not a folder");
  expect_bad_input(parity("report " + write("plain-file", "x")), "is not a folder");
  expect_bad_input(parity("report " + run.string() + " -o " + dir_.string()), "is a folder");
  expect_bad_input(parity("report " + run.string() + " -o " + (dir_ / "no" / "such" / "page.html").string()),
                   "cannot write the report");
  fs::create_directories(dir_ / "empty");
  expect_bad_input(parity("report " + (dir_ / "empty").string()), "holds no campaign output");
  expect_bad_input(parity("fuzz --cases 1 --out " + (dir_ / "x").string(), 60, "PARITY_PLANT=mul=oops"),
                   "names no fault kind");
}


}  // namespace parity::cli

namespace parity::cli {
namespace {

// `parity fuzz --device cuda` refuses up front (exit 7, nothing written) where either backend lacks a CUDA
// device, naming which and why. On a machine where both have one, the refusal cannot be shown: skipped.
TEST_F(Cli, FuzzOnCudaRefusesWithoutADevice) {
  if (!engine::probe_cuda().refusal()) GTEST_SKIP() << "both backends see a CUDA device here: nothing to refuse";
  const fs::path out = dir_ / "cuda-campaign";
  Result r = parity("fuzz --device cuda --cases 5 --seed 1 --out " + shell_quote(out.string()));
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_NE(r.output.find("parity fuzz: --device cuda needs a CUDA device on both backends: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("LibTorch"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "a refused campaign writes nothing";
  Result bad = parity("fuzz --device tpu --cases 5 --out " + shell_quote(out.string()));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--device must be cpu or cuda"), std::string::npos) << bad.output;
}

// --oracle impl-cpu judges impl's cuda by impl on the CPU: without --device cuda there is nothing to judge, and on
// cuda only impl needs a device, so a refusal names impl alone.
TEST_F(Cli, FuzzJudgedByImplOnTheCpuNeedsCudaOnImplOnly) {
  const fs::path out = dir_ / "impl-cpu-campaign";
  Result cpu = parity("fuzz --oracle impl-cpu --cases 5 --out " + shell_quote(out.string()));
  EXPECT_EQ(cpu.exit_code, 2) << cpu.output;
  EXPECT_NE(cpu.output.find("--oracle impl-cpu judges impl's cuda tensors by impl on the CPU: it needs --device cuda"),
            std::string::npos)
      << cpu.output;
  Result bad = parity("fuzz --device cuda --oracle numpy --cases 5 --out " + shell_quote(out.string()));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--oracle must be libtorch or impl-cpu"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(out)) << "a refused campaign writes nothing";
  if (!engine::probe_cuda().refusal(reports::Oracle::ImplCpu))
    GTEST_SKIP() << "impl sees a CUDA device here: nothing to refuse";
  Result r = parity("fuzz --device cuda --oracle impl-cpu --cases 5 --seed 1 --out " + shell_quote(out.string()));
  EXPECT_EQ(r.exit_code, 7) << r.output;
  EXPECT_NE(r.output.find("parity fuzz: --device cuda needs a CUDA device on impl: impl "), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("LibTorch"), std::string::npos) << "LibTorch needs no device here: " << r.output;
  EXPECT_FALSE(fs::exists(out)) << "a refused campaign writes nothing";
}

// `parity run` and `parity replay` take the same --oracle: impl-cpu only for a program with cuda steps, and its
// run shows impl on the CPU as the judging column, its cuda values in host memory.
TEST_F(Cli, RunAndReplayTakeTheOracle) {
  const std::string cpu = write("cpu.json", valid_program());
  expect_bad_input(parity("run " + cpu + " --oracle impl-cpu"), "parity run: --oracle impl-cpu judges impl's cuda");
  expect_bad_input(parity("replay " + cpu + " --oracle impl-cpu"), "this program has no cuda step");
  expect_bad_input(parity("run " + cpu + " --oracle numpy"), "--oracle must be libtorch or impl-cpu");
  std::string text = valid_program();
  text.replace(text.find(R"("seed": 5})"), 10, R"("seed": 5, "device": "cuda"})");
  Result r = parity("run " + write("cuda.json", text) + " --oracle impl-cpu");
  EXPECT_NE(r.output.find("impl-cpu\n"), std::string::npos) << r.output;  // the judging column's header
  EXPECT_EQ(r.output.find("parity: error"), std::string::npos) << r.output;
  if (!engine::probe_cuda().refusal(reports::Oracle::ImplCpu)) return;  // with a device both sides may agree
  // Without a device impl cannot make the cuda tensor; its judge can.
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error(device)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| impl-cpu ok"), std::string::npos) << r.output;
}

// What the probe reports here: this build's LibTorch (1.13 from Debian, CPU libraries only) sees no device.
TEST(DeviceProbe, OracleWithoutTorchCudaSeesNoDevice) {
  if (oracle::linked_with_cuda()) GTEST_SKIP() << "the oracle links torch_cuda (PARITY_ORACLE_CUDA)";
  const engine::CudaProbe p = engine::probe_cuda();
  EXPECT_EQ(p.oracle_devices, 0);
  ASSERT_TRUE(p.refusal());
  EXPECT_NE(p.refusal()->find("-DPARITY_ORACLE_CUDA=ON"), std::string::npos) << *p.refusal();
}

}  // namespace
}  // namespace parity::cli
