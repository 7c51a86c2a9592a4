#include <gtest/gtest.h>

#include "cli/progress.h"

namespace parity::cli {
namespace {

TEST(Progress, SecondsBudgetGivesFractionAndEta) {
  ProgressState s{15, 1200, 3, 2, 60.0, {}};
  EXPECT_DOUBLE_EQ(*done_fraction(s), 0.25);
  EXPECT_DOUBLE_EQ(*eta_seconds(s), 45);
  EXPECT_EQ(progress_text(s, true), "[######------------------] 25%  1200 cases (80.0/s)  findings 3 (2 groups)  ETA 45s");
  EXPECT_EQ(progress_text(s, false), "[15s] 1200 cases (80.0/s)  findings 3 (2 groups)  ETA 45s");
}

TEST(Progress, CasesBudgetEstimatesFromTheRate) {
  ProgressState s{10, 500, 0, 0, {}, 2000};
  EXPECT_DOUBLE_EQ(*done_fraction(s), 0.25);
  EXPECT_DOUBLE_EQ(*eta_seconds(s), 30);  // 1500 cases left at 50/s
  // Both budgets: whichever ends the run first.
  s.seconds_budget = 20;
  EXPECT_DOUBLE_EQ(*done_fraction(s), 0.5);
  EXPECT_DOUBLE_EQ(*eta_seconds(s), 10);
}

TEST(Progress, UnknownBudgetShowsNoBarNorEta) {
  ProgressState s{3, 0, 0, 0, {}, {}};
  EXPECT_FALSE(done_fraction(s));
  EXPECT_FALSE(eta_seconds(s));
  EXPECT_EQ(progress_text(s, true), "[3s] 0 cases (0.0/s)  findings 0 (0 groups)");
  // An overrun budget stays at 100% with nothing left.
  ProgressState over{70, 10, 0, 0, 60.0, {}};
  EXPECT_DOUBLE_EQ(*done_fraction(over), 1.0);
  EXPECT_DOUBLE_EQ(*eta_seconds(over), 0);
}

TEST(Progress, DurationsReadLikeClocks) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(90), "1m30s");
  EXPECT_EQ(format_duration(7500), "2h05m");
  EXPECT_EQ(format_duration(-3), "0s");
}

}  // namespace
}  // namespace parity::cli
