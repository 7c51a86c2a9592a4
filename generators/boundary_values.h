// Values at the edges of each dtype, drawn for scalars (fill values, clamp bounds, an add's other operand) beside
// the small range: where PyTorch checks a conversion ("value cannot be converted to type at::Half without
// overflow"), rounds to infinity, keeps the sign of zero, meets a denormal, or wraps an integer.
#pragma once
#include "generators/rng.h"
#include "program/types.h"

namespace parity::generators {

// The share of drawn scalars that come from the edges below rather than the small range.
inline constexpr double kBoundaryScalarShare = 0.08;
// The share of factory shapes (and arange ends) drawn at the element cap a program may hold (attr_gen.cpp
// cap_shape) rather than small.
inline constexpr double kCapShapeShare = 0.0002;

// What the scalar becomes. Stored: the value itself lands in elements (fill_, full, masked_fill_). Computed: it
// meets the elements in arithmetic (add, mul, pow, clamp bounds). There a large finite scalar scales last-bit
// differences the libraries may make (libm vs SLEEF, summation order) into differences no tolerance absorbs, and
// makes sums that overflow or not by summation order, which neither library defines. So a computed scalar of a
// float type is drawn only from what stays exact: ±0, ±inf, NaN, and the values one past float's range (infinite
// where they are computed); of an integer type from its edges (integers wrap exactly). An int kind scalar
// computed with a float tensor is no edge at all: the caller makes it a float one.
enum class ScalarUse { Stored, Computed };

// An edge value for a scalar of `kind` written into, or computed with, a tensor of `target` dtype: values one past
// the dtype's range, its largest and lowest where sums over them stay defined (float16, computed in float, and the
// integers), its smallest normal and denormal, and (for a float kind) ±0, ±inf and NaN. An int kind holds
// integers only, within the ±2^53 a program's JSON accepts; a bool kind 0 or 1.
double boundary_value(Rng& rng, program::Scalar::Kind kind, program::DType target, ScalarUse use);

}  // namespace parity::generators
