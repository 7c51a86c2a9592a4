#include "generators/boundary_values.h"

#include <cmath>
#include <limits>
#include <vector>

#include "program/internal_assert.h"

namespace parity::generators {

using program::DType;
using program::Scalar;

namespace {

// Per dtype, the edges any scalar may take (largest, lowest, one past each where the dtype has a "past" short of
// infinity, smallest normal, smallest denormal), and those a computed one may take. float16's 65520 is past
// 65504 yet rounds to infinity: PyTorch's overflow check still refuses it.
struct Edges {
  std::vector<double> stored, computed;
};

const Edges& edges(DType d) {
  // A float type computes a scalar in float (the 16-bit ones) or double: only what is infinite there is computed.
  static const std::vector<double> past_float = {3.5e38, -3.5e38};
  static const Edges f16 = {{65504.0, -65504.0, 65520.0, -65536.0, 6.103515625e-05, 5.960464477539063e-08},
                            past_float};
  // The largest finite values of the types that accumulate in their own precision (or bfloat16's, in float) are
  // left out even where stored: a product or sum over them overflows or not by order and fused multiply-adds
  // (BLAS's mm), which neither library defines.
  static const Edges bf16 = {{3.4e38, -3.4e38, 1.1754943508222875e-38, 9.183549615799121e-41}, past_float};
  static const Edges f32 = {{3.5e38, -3.5e38, 1.1754943508222875e-38, 1.401298464324817e-45}, past_float};
  static const Edges f64 = {{std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min()}, {}};
  static const Edges i32 = {{2147483647.0, -2147483648.0, 2147483648.0, -2147483649.0},
                            {2147483647.0, -2147483648.0, 2147483648.0, -2147483649.0}};
  // int64's own edges are beyond what a double holds exactly: -2^63 is, and 2^63 (as a float) is one past.
  static const Edges i64 = {{9007199254740992.0, -9007199254740992.0, -9223372036854775808.0, 9223372036854775808.0},
                            {9007199254740992.0, -9007199254740992.0, -9223372036854775808.0, 9223372036854775808.0}};
  static const Edges b = {{0.0, 1.0}, {0.0, 1.0}};
  switch (d) {
    case DType::Float16: return f16;
    case DType::BFloat16: return bf16;
    case DType::Float32: return f32;
    case DType::Float64: return f64;
    case DType::Int32: return i32;
    case DType::Int64: return i64;
    case DType::Bool: return b;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

constexpr double kMaxExactDouble = 9007199254740992.0;  // 2^53: the int scalars a program's JSON accepts

}  // namespace

double boundary_value(Rng& rng, Scalar::Kind kind, DType target, ScalarUse use) {
  auto of = [use](DType d) -> const std::vector<double>& {
    return use == ScalarUse::Stored ? edges(d).stored : edges(d).computed;
  };
  switch (kind) {
    case Scalar::Kind::Bool: return static_cast<double>(rng.below(2));
    case Scalar::Kind::Int: {
      // The target's integral edges (float16's 65520 as an int is refused as 65520.0 is), else int32's.
      std::vector<double> ints;
      for (double v : of(target))
        if (v >= -kMaxExactDouble && v <= kMaxExactDouble && std::trunc(v) == v) ints.push_back(v);
      for (double v : of(DType::Int32)) ints.push_back(v);
      ints.push_back(-1.0);  // with the edges: -1 * INT_MIN, the one product that overflows by sign
      return rng.pick(ints);
    }
    case Scalar::Kind::Float: {
      const double inf = std::numeric_limits<double>::infinity();
      // An integral or bool tensor computes a float scalar in the default dtype.
      const std::vector<double>& own = of(program::is_floating(target) ? target : DType::Float32);
      if (own.empty() || rng.chance(0.4))
        return rng.pick({0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN()});
      return rng.pick(own);
    }
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

}  // namespace parity::generators
