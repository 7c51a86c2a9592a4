// The campaign's confirming runs (CampaignConfig::confirm_runs): a divergence that does not repeat on every run
// is labelled flaky and recorded as found instead of being shrunk; a steady one is confirmed on every run.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/campaign.h"
#include "impl_backend/planted_faults.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "tests/support/campaign.h"

namespace parity::engine {
namespace {

using testing::in_process_planted_with;
using testing::reviewed_ledger;
using testing::TempDir;

CampaignConfig planted_campaign(const std::filesystem::path& out, std::uint64_t cases) {
  CampaignConfig c;
  c.seed = 7;
  c.cases = cases;
  c.jobs = 2;
  c.out = out;
  prepare_output(c.out, false);
  return c;
}

// A divergence that comes and goes (the planted flaky fault: every other evaluation) is confirmed as flaky and
// recorded as found, unshrunk; a steady one is confirmed on every run. Forked one at a time, so the turns are
// the same every run of the test.
TEST(CampaignConfirm, AFlakyDivergenceIsLabelledAndNotShrunk) {
  if (!in_process_planted_with("mul=flaky")) return;
  ASSERT_EQ(impl_backend::planted_fault_texts(), std::vector<std::string>{"mul=flaky"});
  TempDir dir;
  CampaignConfig c = planted_campaign(dir.path() / "out", 120);
  c.isolation = Isolation::Fork;
  c.jobs = 1;
  c.confirm_runs = 3;
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  std::uint64_t flaky = 0;
  for (const auto& record : reports::read_jsonl(c.out / "findings.jsonl").records) {
    const reports::Finding f = reports::finding_from_json(record);
    ASSERT_TRUE(f.reproducible) << f.signature.to_string();
    EXPECT_EQ(f.reproducible->runs, 3);
    if (f.expected) continue;  // a ledgered LibTorch bug, steady
    EXPECT_EQ(f.signature.to_string(), "mul:values");
    EXPECT_TRUE(f.reproducible->flaky()) << "case " << f.case_index << ": " << f.reproducible->diverged << "/3";
    EXPECT_EQ(f.program.steps.size(), f.original_program_size) << "a flaky finding was shrunk";
    EXPECT_EQ(f.shrink_evaluations, 0);
    ++flaky;
  }
  EXPECT_GT(flaky, 0u);
  EXPECT_EQ(r.summary.flaky_findings, flaky);
}

TEST(CampaignConfirm, ASteadyDivergenceIsConfirmedOnEveryRun) {
  if (!in_process_planted_with("mul=values")) return;
  TempDir dir;
  CampaignConfig c = planted_campaign(dir.path() / "out", 120);
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  std::size_t findings = 0;
  for (const auto& record : reports::read_jsonl(c.out / "findings.jsonl").records) {
    const reports::Finding f = reports::finding_from_json(record);
    ASSERT_TRUE(f.reproducible);
    EXPECT_EQ(*f.reproducible, (reports::Finding::Reproducibility{3, 3})) << f.signature.to_string();
    ++findings;
  }
  EXPECT_GT(findings, 0u);
  EXPECT_EQ(r.summary.flaky_findings, 0u);
}

}  // namespace
}  // namespace parity::engine
