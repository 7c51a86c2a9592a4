// The main of parity_unit_tests: GoogleTest's, except that a run that selected no test fails
// (properties/run_selected_tests.h).
#include <gtest/gtest.h>

#include "properties/run_selected_tests.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return parity::properties::run_selected_tests("parity_unit_tests");
}
