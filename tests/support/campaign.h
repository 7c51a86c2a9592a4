// What the tests that run whole campaigns in this process share: faults planted in a fresh process of the test
// binary, and the reviewed ledger a real campaign is judged against (and a temporary folder, tests/support/temp_dir.h).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "impl_backend/planted_faults.h"
#include "reports/build_info.h"
#include "reports/known_divergences.h"
#include "tests/support/temp_dir.h"

namespace parity::testing {

// PARITY_PLANT is read once per process (impl_backend/planted_faults.h), so a test that needs faults planted
// runs again in a fresh process of this binary with the variable set. Returns true in that process; in the
// first one it checks the rerun passed and returns false. The rerun is not sharded: a shard of the first
// process (ci/sanitize.sh runs one per core) would leave it no test to run.
inline bool in_process_planted_with(const std::string& faults) {
  if (const char* now = std::getenv(impl_backend::kPlantVariable); now && faults == now) return true;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX " +
                              std::string(impl_backend::kPlantVariable) + "=" + faults + " '" + self +
                              "' --gtest_filter=" + test->test_suite_name() + "." + test->name();
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << " failed (status " << status << ")";
  return false;
}

// The reviewed ledger, as `parity fuzz` reads it: a planted campaign is judged against it, so that LibTorch's
// own known bugs elsewhere do not hide or pose as the fault.
inline const reports::KnownDivergences& reviewed_ledger() {
  static const auto k = reports::KnownDivergences::load(reports::default_known_divergences_path());
  return k;
}

}  // namespace parity::testing
