// engine/journal.h: a campaign stopped, or killed at the worst moment, goes on from its journal to the campaign
// it would have been.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine/campaign.h"
#include "engine/journal.h"
#include "impl_backend/planted_faults.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "tests/support/campaign.h"
#include "tests/support/stop_after.h"

namespace parity::engine {
namespace {

namespace fs = std::filesystem;

using testing::in_process_planted_with;
using testing::reviewed_ledger;
using testing::StopAfter;
using testing::TempDir;

// Enough cases that the planted mul=values fault gives several findings, whichever programs the op table makes
// the seed generate.
constexpr std::uint64_t kPlantedCases = 240;

CampaignConfig planted_campaign(const fs::path& out) {
  CampaignConfig c;
  c.seed = 7;
  c.cases = kPlantedCases;
  c.jobs = 2;
  c.out = out;
  prepare_output(c.out, false);
  return c;
}

using Recorded = std::multiset<std::pair<std::uint64_t, std::string>>;  // (case, signature) of each finding

Recorded recorded_in(const fs::path& out) {
  Recorded r;
  for (const auto& record : reports::read_jsonl(out / "findings.jsonl").records) {
    const reports::Finding f = reports::finding_from_json(record);
    r.emplace(f.case_index, f.signature.to_string());
  }
  return r;
}

// What a campaign found and counted, without its times and what shrinking made of its findings (a time budget
// bounds it), but with a smallest program for every group that recorded one.
void expect_same_campaign(reports::RunSummary a, reports::RunSummary b) {
  for (const auto& [sig, g] : a.groups) {
    if (auto other = b.groups.find(sig); other != b.groups.end()) {
      EXPECT_EQ(g.smallest.has_value(), other->second.smallest.has_value()) << sig.to_string();
    }
  }
  for (auto* s : {&a, &b}) {
    s->seconds = s->cases_per_second = s->shrink_seconds = 0;
    s->unshrunk_findings = 0;
    s->resumed = 0;
    for (auto& [sig, g] : s->groups) g.smallest.reset();
  }
  EXPECT_EQ(a, b);
}

// Ends the process the moment the first finding is in findings.jsonl: before the journal says it is recorded,
// the worst moment for a kill.
class DieAtFirstFinding : public CampaignObserver {
 public:
  void on_finding(const reports::Finding&) override { ::_exit(0); }
};

TEST(CampaignJournal, RoundTrips) {
  TempDir dir;
  Journal j;
  j.config.seed = 18446744073709551615ULL;
  j.config.cases = 40;
  j.config.generator.max_steps = 9;
  j.config.timeout = std::chrono::milliseconds(1234);
  j.config.jobs = 3;
  j.config.confirm_runs = 5;
  j.config.shard = {1, 4};
  j.config.known_file = "/some/ledger.json";
  j.config.generator.cuda = true;
  j.config.oracle = reports::Oracle::ImplCpu;
  j.next_case = 21;
  j.elapsed = 2.5;
  record_settings(j.config, j.summary);
  j.summary.libtorch_version = "1.13.0";
  j.summary.cases = 5;  // cases 1, 5, 9, 13 and 17 of shard 1/4
  j.summary.resumed = 2;
  reports::Finding f;
  f.seed = j.config.seed;
  f.case_index = 17;
  f.signature = judge::Signature::parse("mul:values").value();
  f.reproducible = reports::Finding::Reproducibility{5, 4};
  j.pending = f;
  write_journal(dir.path(), j);
  const Journal back = read_journal(dir.path());
  EXPECT_EQ(back.config.seed, j.config.seed);
  EXPECT_EQ(back.config.cases, j.config.cases);
  EXPECT_FALSE(back.config.seconds);
  EXPECT_EQ(back.config.generator.max_steps, 9);
  EXPECT_EQ(back.config.timeout, j.config.timeout);
  EXPECT_EQ(back.config.jobs, 3);
  EXPECT_EQ(back.config.confirm_runs, 5);
  EXPECT_EQ(back.config.shard, j.config.shard);
  EXPECT_EQ(back.config.known_file, j.config.known_file);
  EXPECT_TRUE(back.config.generator.cuda);
  EXPECT_EQ(back.config.oracle, reports::Oracle::ImplCpu);  // a resumed campaign is judged as it started
  EXPECT_EQ(back.config.out, dir.path());
  EXPECT_EQ(back.next_case, 21u);
  EXPECT_EQ(back.elapsed, 2.5);
  EXPECT_EQ(back.summary, j.summary);
  EXPECT_EQ(back.pending, j.pending);
  remove_journal(dir.path());
  EXPECT_THROW(read_journal(dir.path()), reports::ReportError);
}

TEST(CampaignJournal, AFolderWithAJournalHoldsACampaign) {
  TempDir dir;
  prepare_output(dir.path() / "out", false);
  std::ofstream(dir.path() / "out" / kJournalFile) << "{}";
  EXPECT_THROW(prepare_output(dir.path() / "out", false), reports::ReportError);
  prepare_output(dir.path() / "out", true);
  EXPECT_FALSE(fs::exists(dir.path() / "out" / kJournalFile));
}

TEST(CampaignResume, AStoppedCampaignGoesOnToTheSameCampaign) {
  if (!in_process_planted_with("mul=values")) return;
  TempDir dir;
  const CampaignConfig whole = planted_campaign(dir.path() / "whole");
  const CampaignResult reference = run_campaign(whole, reviewed_ledger());
  ASSERT_GT(reference.summary.recorded_findings, 1u);
  EXPECT_FALSE(fs::exists(whole.out / kJournalFile)) << "a complete campaign keeps no journal";

  const CampaignConfig parts = planted_campaign(dir.path() / "parts");
  std::atomic<bool> stop{false};
  StopAfter observer(50, stop);
  const CampaignResult first = run_campaign(parts, reviewed_ledger(), &stop, &observer);
  ASSERT_TRUE(first.summary.interrupted);
  ASSERT_LT(first.summary.cases, kPlantedCases);
  const Journal journal = read_journal(parts.out);
  EXPECT_EQ(journal.next_case, first.summary.cases);
  EXPECT_FALSE(journal.pending);

  const CampaignResult rest = resume_campaign(journal, reviewed_ledger());
  EXPECT_FALSE(rest.summary.interrupted);
  EXPECT_EQ(rest.summary.resumed, 1);
  EXPECT_EQ(rest.summary.cases, kPlantedCases);
  expect_same_campaign(rest.summary, reference.summary);
  EXPECT_EQ(recorded_in(parts.out), recorded_in(whole.out));
  EXPECT_FALSE(fs::exists(parts.out / kJournalFile));
}

// Killed right after a finding reached findings.jsonl, before the journal said so: resuming must not write it
// again. And if it had not reached the file (killed while shrinking it), resuming must shrink and write it.
TEST(CampaignResume, AFindingBeingRecordedAtAKillIsRecordedOnce) {
  if (!in_process_planted_with("mul=values")) return;
  ASSERT_EQ(impl_backend::planted_fault_texts(), std::vector<std::string>{"mul=values"});
  TempDir dir;
  const CampaignConfig whole = planted_campaign(dir.path() / "whole");
  const CampaignResult reference = run_campaign(whole, reviewed_ledger());

  const CampaignConfig killed = planted_campaign(dir.path() / "on-file");
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    DieAtFirstFinding observer;
    run_campaign(killed, reviewed_ledger(), nullptr, &observer);
    ::_exit(3);  // never reached: the campaign records findings
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  ASSERT_EQ(recorded_in(killed.out).size(), 1u);
  ASSERT_TRUE(read_journal(killed.out).pending);

  // The same kill a moment earlier: the finding not yet written (its line cut from a copy).
  const fs::path not_on_file = dir.path() / "not-on-file";
  fs::copy(killed.out, not_on_file);
  std::ofstream(not_on_file / "findings.jsonl", std::ios::trunc).flush();

  for (const fs::path& out : {killed.out, not_on_file}) {
    SCOPED_TRACE(out.string());
    Journal j = read_journal(out);
    const CampaignResult rest = resume_campaign(j, reviewed_ledger());
    EXPECT_EQ(rest.summary.cases, kPlantedCases);
    expect_same_campaign(rest.summary, reference.summary);
    EXPECT_EQ(recorded_in(out), recorded_in(whole.out));
  }
}

TEST(CampaignResume, RefusesAnotherBuildsCampaign) {
  Journal j;
  j.summary.libtorch_version = "0.1";
  j.summary.parity_commit = "elsewhere";
  j.summary.generator_version = -1;
  j.summary.planted_faults = {"add=crash"};
  const auto why = resume_mismatches(j);
  ASSERT_EQ(why.size(), 4u);
  EXPECT_NE(why[0].find("LibTorch"), std::string::npos);
  EXPECT_NE(why[3].find("planted faults"), std::string::npos);
}

}  // namespace
}  // namespace parity::engine
