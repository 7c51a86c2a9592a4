// generators/boundary_values.h: which edge values a scalar may take, and that generated programs reach them (a
// float16 fill past 65504, NaN and -0 scalars, int32's edges) while a float tensor never computes with a large
// finite one.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "generators/attr_gen.h"
#include "generators/boundary_values.h"
#include "generators/program_state.h"
#include "generators/program_gen.h"
#include "program/json.h"
#include "program/op_table.h"
#include "program/program_builder.h"

namespace parity::generators {
namespace {

using program::DType;
using program::Scalar;

constexpr DType kDtypes[] = {DType::Float32, DType::Float64, DType::Int64, DType::Bool,
                             DType::Int32,   DType::Float16, DType::BFloat16};

TEST(BoundaryValues, EachKindAndUseKeepsToItsEdges) {
  Rng rng(5);
  for (DType d : kDtypes)
    for (int i = 0; i < 400; ++i) {
      const double b = boundary_value(rng, Scalar::Kind::Bool, d, ScalarUse::Stored);
      EXPECT_TRUE(b == 0.0 || b == 1.0);
      const double n = boundary_value(rng, Scalar::Kind::Int, d, ScalarUse::Computed);
      EXPECT_EQ(std::trunc(n), n);
      EXPECT_LE(std::abs(n), 9007199254740992.0);  // the int scalars a program's JSON accepts
      // A float tensor computes only with what stays exact: ±0, ±inf, NaN, or what is infinite in float.
      const double f = boundary_value(rng, Scalar::Kind::Float, d, ScalarUse::Computed);
      if (program::is_floating(d))
        EXPECT_TRUE(f == 0.0 || std::isinf(f) || std::isnan(f) || std::abs(f) == 3.5e38) << f;
    }
}

TEST(BoundaryValues, ProgramsReachTheEdges) {
  bool half_overflow = false, nan = false, negative_zero = false, int32_edge = false;
  // Stops as soon as every edge was met; the bound only keeps a broken generator from running forever.
  for (std::uint64_t seed = 0; seed < 20000 && !(half_overflow && nan && negative_zero && int32_edge); ++seed) {
    for (const program::Step& s : generate(seed, rc::kNominalSize, {}).value().steps) {
      if (!program::spec(s.op).reads(program::Attr::Scalar)) continue;
      const double v = s.attrs.scalar.value;
      nan = nan || std::isnan(v);
      negative_zero = negative_zero || (v == 0.0 && std::signbit(v));
      int32_edge = int32_edge || v == 2147483647.0 || v == -2147483648.0;
      // float16 refuses it; only a stored scalar (fill_, full, masked_fill, full_like) takes so large a value.
      half_overflow = half_overflow || v == 65520.0;
    }
  }
  EXPECT_TRUE(half_overflow);
  EXPECT_TRUE(nan);
  EXPECT_TRUE(negative_zero);
  EXPECT_TRUE(int32_edge);
}

// A factory's shape is now and then at the element cap a program may hold, never past it, and a step whose result
// would be past it (an expand of such a tensor) is never generated: every program reads back.
TEST(BoundaryValues, FactoryShapesReachTheCapAndNoResultPassesIt) {
  Rng rng(11);
  int at_cap = 0;
  for (int i = 0; i < 40000; ++i) {
    const program::Attrs a = valid_attrs(rng, program::OpId::Zeros, {}, 0, false);
    ASSERT_TRUE(program::within_numel_limit(a.sizes)) << program::render_ints(a.sizes);
    std::int64_t n = 1;
    for (auto s : a.sizes) n *= s;
    at_cap += n >= program::kMaxNumel - 1;
  }
  EXPECT_GT(at_cap, 0);
  program::ProgramBuilder b;
  program::Attrs cap;
  cap.sizes = {1, program::kMaxNumel};
  const int big = b.step(program::OpId::Zeros, {}, cap);
  ProgramState state;
  for (const auto& s : b.program().steps) state.append(s);
  program::Attrs twice;
  twice.sizes = {2, program::kMaxNumel};
  EXPECT_TRUE(state.check({program::OpId::Expand, {big}, twice, true}).undefined);
  twice.sizes = {1, program::kMaxNumel};
  EXPECT_FALSE(state.check({program::OpId::Expand, {big}, twice, true}).undefined);
}

}  // namespace
}  // namespace parity::generators
