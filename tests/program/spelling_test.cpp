// program/spelling: the "did you mean" of every refusal of a name (ops, flags, commands).
#include "program/spelling.h"

#include <gtest/gtest.h>

namespace parity::program {
namespace {

TEST(Spelling, SuggestsTheNameAFewEditsAway) {
  const std::vector<std::string> ops = {"full", "mul", "mul_", "add", "transpose"};
  EXPECT_EQ(closest_name("mull", ops), "mul") << "of two names one edit away, the one sharing the longer prefix";
  EXPECT_EQ(closest_name("tranpsose", ops), "transpose") << "two neighbours swapped are one edit";
  EXPECT_EQ(closest_name("ad", ops), "add");
  EXPECT_EQ(closest_name("mul", ops), std::nullopt) << "a known name is no typo";
  EXPECT_EQ(closest_name("sqrt", ops), std::nullopt) << "nothing close";
  EXPECT_EQ(closest_name("", ops), std::nullopt);
  EXPECT_EQ(did_you_mean("--seconde", {"--seconds", "--cases"}), " (did you mean \"--seconds\"?)");
  EXPECT_EQ(did_you_mean("--jobz", {"--seconds"}), "");
}

}  // namespace
}  // namespace parity::program
