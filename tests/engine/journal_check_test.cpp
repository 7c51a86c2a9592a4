// engine/journal.h: a journal read back is held to what a campaign could have written (its settings to the flags'
// ranges, its summary to its settings and to its own counts, its position and pending finding to its shard, budget
// and seed). Each edit below was once resumed as if it were true: a campaign of fewer cases reported as whole,
// 10^12 cases claimed, every case a timeout, a finding of a case no campaign ran.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/campaign.h"
#include "engine/case_seed.h"
#include "engine/journal.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "program/json_text.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "tests/support/campaign.h"
#include "tests/support/stop_after.h"

namespace parity::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::reviewed_ledger;
using testing::StopAfter;
using testing::TempDir;

constexpr std::uint64_t kBudget = 400;
constexpr std::uint64_t kStopAfter = 20;

// A campaign of seed 31 stopped after about kStopAfter cases, its journal left for --resume.
fs::path stopped_campaign(const fs::path& out) {
  CampaignConfig c;
  c.seed = 31;
  c.cases = kBudget;
  c.jobs = 1;
  c.out = out;
  prepare_output(c.out, false);
  std::atomic<bool> stop{false};
  StopAfter observer(kStopAfter, stop);
  const CampaignResult r = run_campaign(c, reviewed_ledger(), &stop, &observer);
  EXPECT_TRUE(r.summary.interrupted);
  return out;
}

json journal_json(const fs::path& dir) {
  return program::parse_json_text(files::read_text_file(dir / kJournalFile), "journal");
}

void write_journal_json(const fs::path& dir, const json& j) {
  files::write_text_file_atomically(dir / kJournalFile, j.dump(), "the test's journal");
}

// A copy of the stopped campaign with `edit` made to its journal: read_journal refuses it, naming `field`.
void expect_refused(const fs::path& stopped, const std::string& name, const std::function<void(json&)>& edit,
                    const std::string& field) {
  SCOPED_TRACE(name);
  const fs::path copy = stopped.parent_path() / name;
  fs::copy(stopped, copy);
  json j = journal_json(copy);
  edit(j);
  write_journal_json(copy, j);
  try {
    read_journal(copy);
    ADD_FAILURE() << "an edited journal was read as a campaign's";
  } catch (const reports::ReportError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(JournalCheck, TheStoppedCampaignsJournalIsRead) {
  TempDir dir;
  const Journal j = read_journal(stopped_campaign(dir.path() / "stopped"));
  EXPECT_GE(j.summary.cases, kStopAfter);
  EXPECT_LT(j.summary.cases, kBudget);
}

TEST(JournalCheck, PositionAndCountsMustBeTheCampaigns) {
  TempDir dir;
  const fs::path stopped = stopped_campaign(dir.path() / "stopped");
  expect_refused(stopped, "next-case-at-budget", [](json& j) { j["next_case"] = kBudget; }, "summary.cases");
  expect_refused(stopped, "next-case-past-budget", [](json& j) { j["next_case"] = 10 * kBudget; }, "next_case");
  expect_refused(stopped, "many-cases", [](json& j) { j["summary"]["cases"] = 1000000000000ull; }, "summary.cases");
  expect_refused(stopped, "findings-without-groups", [](json& j) { j["summary"]["findings"] = 3; }, "findings");
  expect_refused(stopped, "recorded-not-found", [](json& j) { j["summary"]["recorded_findings"] = 2; },
                 "recorded_findings");
  expect_refused(stopped, "negative-elapsed", [](json& j) { j["elapsed"] = -5; }, "elapsed");
}

TEST(JournalCheck, SettingsMustBeWithinTheFlagsRanges) {
  TempDir dir;
  const fs::path stopped = stopped_campaign(dir.path() / "stopped");
  const std::vector<std::pair<std::string, json>> edits = {
      {"timeout_ms", -1},      {"max_steps", 100000},  {"memory_limit_mb", 1ull << 40},
      {"shrink_share", -5},    {"invalid_share", 5},   {"confirm_runs", 2147483647},
      {"seconds", -1},         {"jobs", 0},            {"guided_share", 2},
      {"backend_start_ms", 0}, {"swarm_share", -0.5},
  };
  for (const auto& [field, value] : edits)
    expect_refused(stopped, field, [&](json& j) { j["campaign"][field] = value; }, "campaign." + field);
}

TEST(JournalCheck, TheSummaryMustRecordTheCampaignsSettings) {
  TempDir dir;
  const fs::path stopped = stopped_campaign(dir.path() / "stopped");
  expect_refused(stopped, "summary-timeout", [](json& j) { j["summary"]["timeout_ms"] = 1; }, "summary.timeout_ms");
  expect_refused(stopped, "summary-seed", [](json& j) { j["summary"]["seed"] = "32"; }, "summary.seed");
  expect_refused(stopped, "summary-budget", [](json& j) { j["summary"]["budget"]["cases"] = "100000"; },
                 "summary.budget");
}

// The pending finding: the case judged last, of the campaign's seed, with the program that case runs.
TEST(JournalCheck, APendingFindingMustBeTheCaseJudgedLast) {
  TempDir dir;
  const fs::path stopped = stopped_campaign(dir.path() / "stopped");
  const Journal journal = read_journal(stopped);
  const std::uint64_t last = journal.next_case - 1;
  auto finding_of = [&](std::uint64_t k, std::uint64_t program_of) {
    reports::Finding f;
    f.seed = journal.config.seed;
    f.case_index = k;
    f.case_seed = case_seed(f.seed, k);
    f.signature = judge::Signature::parse("mul:values").value();
    f.program = generate_case(f.seed, program_of, journal.config.generator).value();
    return reports::to_json(f);
  };
  expect_refused(stopped, "far-case", [&](json& j) { j["pending"] = finding_of(1000000000000000ull, last); },
                 "pending.case_index");
  expect_refused(stopped, "other-seed", [&](json& j) {
    j["pending"] = finding_of(last, last);
    j["pending"]["seed"] = "5";
  }, "pending.seed");

  // Where it names the right case, the program must be that case's: one of another case is refused on resume...
  const fs::path swapped = dir.path() / "swapped";
  fs::copy(stopped, swapped);
  json j = journal_json(swapped);
  j["pending"] = finding_of(last, last - 3);
  write_journal_json(swapped, j);
  try {
    resume_campaign(read_journal(swapped), reviewed_ledger());
    ADD_FAILURE() << "a pending finding with another case's program was resumed";
  } catch (const reports::ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("pending.program"), std::string::npos) << e.what();
  }
  // ... and its own is taken (it no longer diverges, so it is recorded as found).
  const fs::path own = dir.path() / "own";
  fs::copy(stopped, own);
  j["pending"] = finding_of(last, last);
  write_journal_json(own, j);
  const CampaignResult r = resume_campaign(read_journal(own), reviewed_ledger());
  EXPECT_EQ(r.summary.cases, kBudget);
  // Recorded once, at its case; the cases after it may find what they find (a ledgered divergence).
  int recorded = 0;
  for (const json& f : reports::read_jsonl(own / "findings.jsonl").records)
    recorded += f.at("signature") == "mul:values" && reports::finding_from_json(f).case_index == last;
  EXPECT_EQ(recorded, 1);
}

}  // namespace
}  // namespace parity::engine
