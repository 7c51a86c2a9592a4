// RUN_ALL_TESTS for parity's test binaries, failing a run that selected no test: a mistyped --gtest_filter (or a
// shard given nothing) otherwise exits 0, a green run that tested nothing. Listing the tests checks nothing.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>

namespace parity::properties {

// The status a run that selected no test exits with: a test that failed, as far as a script can tell.
inline constexpr int kExitNoTestSelected = 1;

inline int run_selected_tests(const char* program) {
  const int status = RUN_ALL_TESTS();
  if (status != 0 || GTEST_FLAG_GET(list_tests) || ::testing::UnitTest::GetInstance()->test_to_run_count() > 0)
    return status;
  std::fprintf(stderr, "%s: no test matches --gtest_filter=%s (and the shard, if any): nothing was tested\n", program,
               GTEST_FLAG_GET(filter).c_str());
  return kExitNoTestSelected;
}

}  // namespace parity::properties
