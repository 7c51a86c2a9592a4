// program/types.h's scalars: which values are a dtype's edges rather than the generator's small range.
#include <gtest/gtest.h>

#include <limits>

#include "program/types.h"

namespace parity::program {
namespace {

TEST(Scalar, AnEdgeIsOutsideTheSmallRangeNonFiniteOrNegativeZero) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (double v : {kSmallScalarLow, kSmallScalarHigh, 0.0, 1.0, -0.25, 1e-40}) EXPECT_FALSE(is_edge_scalar(v)) << v;
  for (double v : {kSmallScalarLow - 0.5, kSmallScalarHigh + 0.5, 65504.0, -0.0, inf, -inf,
                   std::numeric_limits<double>::quiet_NaN()})
    EXPECT_TRUE(is_edge_scalar(v)) << v;
}

}  // namespace
}  // namespace parity::program
