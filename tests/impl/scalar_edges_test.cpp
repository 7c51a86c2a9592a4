// Scalars at a dtype's edges, where ATen converts them and what it computes with them. Each expectation is what
// LibTorch 1.13 does (and 2.15 where a release is chosen), as the campaigns with edge scalars found it.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "impl/autograd/meta.h"
#include "impl/ops.h"
#include "impl/torch_version.h"
#include "tests/support/impl_errors.h"
#include "tests/support/impl_release.h"
#include "tests/support/impl_tensors.h"

namespace parity::impl::testing {
namespace {

class ImplScalarEdges : public parity::testing::FollowsTorch113 {};

// The kernel converts a fill value: a leaf's autograd refusal and full's size check come first.
TEST_F(ImplScalarEdges, TheConversionCheckComesAfterAutogradAndSizes) {
  const Tensor x = requires_grad_(values({1, 2}), true);
  EXPECT_EQ(kind_of([&] { fill_(x, Scalar::of(3.5e38)); }), ErrorKind::LeafInPlace);
  EXPECT_EQ(kind_of([&] { full({2, -2}, Scalar::of(3.5e38), ScalarType::Float32); }), ErrorKind::Argument);
  EXPECT_NE(error_of([&] { full({2, -2}, Scalar::of(3.5e38), ScalarType::Float32); }).second.find("negative dimension"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { fill_(values({1, 2}), Scalar::of(3.5e38)); }).second,
            "value cannot be converted to type float without overflow");
}

// 2.x's fill of one 16-bit float converts unchecked (65520 fills it with infinity), not of more; its clamp
// makes a NaN bound's result NaN alone too, and judges an integral tensor's bounds against the dtype's range.
TEST_F(ImplScalarEdges, ReleaseTwoFillsFloatsUncheckedAndClampsByRange) {
  const Tensor half = values({1}, ScalarType::Float16);
  EXPECT_EQ(kind_of([&] { fill_(half, Scalar::of_int(65520)); }), ErrorKind::Argument);
  const Tensor x = values({1.25, -3});
  EXPECT_EQ(clamp(x, std::nullopt, Scalar::of(NAN)).to_vector()[0], 1.25);
  const Tensor i32 = values({1, -3}, ScalarType::Int32);
  EXPECT_EQ(error_of([&] { clamp(i32, Scalar::of_int(2147483648LL), std::nullopt); }).second,
            "value cannot be converted to type int without overflow");
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_EQ(full({1}, Scalar::of(65520.0), ScalarType::Float16).to_vector()[0], INFINITY);
  fill_(half, Scalar::of_int(65520));
  EXPECT_EQ(half.to_vector()[0], INFINITY);
  EXPECT_EQ(kind_of([&] { fill_(values({1}), Scalar::of(3.5e38)); }), ErrorKind::Argument);
  EXPECT_EQ(kind_of([&] { fill_(values({1, 2}, ScalarType::Float16), Scalar::of_int(65520)); }), ErrorKind::Argument);
  EXPECT_EQ(error_of([&] { masked_fill_(half, values({1}, ScalarType::Bool), Scalar::of(65520.0)); }).second,
            "value cannot be converted to type c10::Half without overflow");
  EXPECT_TRUE(std::isnan(clamp(x, std::nullopt, Scalar::of(NAN)).to_vector()[0]));
  EXPECT_EQ(error_of([&] { clamp(i32, Scalar::of_int(2147483648LL), std::nullopt); }).second,
            "Clamp min value 2.14748e+09 is outside the representable range of Int");
  EXPECT_EQ(error_of([&] { clamp(i32, std::nullopt, Scalar::of_int(-2147483649LL)); }).second,
            "Clamp max value -2.14748e+09 is outside the representable range of Int");
  EXPECT_EQ(clamp(i32, Scalar::of_int(-2147483649LL), Scalar::of_int(2147483648LL)).to_vector(),
            (std::vector<double>{1, -3}));
}

// pow converts its exponent to double for float and double, to the element type otherwise; 2.x names the
// 16-bit types as c10's.
TEST_F(ImplScalarEdges, PowConvertsItsExponentToTheElementTypeBelowFloat) {
  const Tensor half = values({1, 2}, ScalarType::Float16);
  EXPECT_EQ(error_of([&] { pow(half, Scalar::of(65520.0)); }).second,
            "value cannot be converted to type at::Half without overflow");
  {
    TargetTorchVersionGuard release(TorchVersion{2, 15});
    EXPECT_EQ(error_of([&] { pow(half, Scalar::of(65520.0)); }).second,
              "value cannot be converted to type c10::Half without overflow");
  }
  EXPECT_EQ(kind_of([&] { pow(values({1, 2}, ScalarType::Int32), Scalar::of_int(2147483648LL)); }),
            ErrorKind::Argument);
  EXPECT_EQ(pow(values({2}), Scalar::of(3.5e38)).to_vector()[0], INFINITY);
  // A float exponent a float cannot hold stays double outside the vectorised loop: (-1)^(2^31 - 1) is -1.
  EXPECT_EQ(pow(values({-1}), Scalar::of_int(2147483647)).to_vector()[0], -1.0);
}

// addcmul computes the 16-bit floats in float, the value a float: 3.4e38 is finite there, and what does not fit
// float is refused in float's name.
TEST_F(ImplScalarEdges, AddcmulOfSixteenBitFloatsTakesAFloatValue) {
  const Tensor x = values({0.75}, ScalarType::BFloat16);
  const double r = addcmul(x, x, x, Scalar::of(3.4e38)).to_vector()[0];
  EXPECT_TRUE(std::isfinite(r)) << r;
  EXPECT_EQ(error_of([&] { addcmul(x, x, x, Scalar::of(-3.5e38)); }).second,
            "value cannot be converted to type float without overflow");
}

// 1.13's MulBackward1 multiplies by a 0-dim float64 tensor: a 0-dim gradient computes in float64 (0 * -3.5e38
// is -0), where 2.x's multiply by the Scalar computes in float (NaN).
TEST_F(ImplScalarEdges, ScalarDerivativesPromoteA0DimGradientIn113) {
  auto grad_of_zeroed_product = [] {
    const Tensor x = requires_grad_(full({}, Scalar::of(0.5), ScalarType::Float32), true);
    backward(zero_(mul(x, Scalar::of(-3.5e38))));
    return autograd::grad(x).to_vector()[0];
  };
  const double v113 = grad_of_zeroed_product();
  EXPECT_EQ(v113, 0.0);
  EXPECT_TRUE(std::signbit(v113));
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_TRUE(std::isnan(grad_of_zeroed_product()));
}

// c10::checked_convert compared a double with an integral type's largest value as a double: int32 refused
// 2147483647.5, and 2^63 (int64's largest as a double) passed into int64. FloatToIntegralRangeIsExact reverses both.
TEST_F(ImplScalarEdges, TheTopOfAnIntegralRangeIsPerRelease) {
  const Tensor i32 = values({0}, ScalarType::Int32), i64 = values({0}, ScalarType::Int64);
  EXPECT_EQ(error_of([&] { fill_(i32, Scalar::of(2147483647.5)); }).second,
            "value cannot be converted to type int without overflow");
  EXPECT_NO_THROW(fill_(i64, Scalar::of(0x1p63)));
  EXPECT_EQ(kind_of([&] { fill_(i64, Scalar::of(NAN)); }), ErrorKind::Argument);
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_EQ(fill_(i32, Scalar::of(2147483647.5)).to_vector()[0], 2147483647);
  EXPECT_EQ(error_of([&] { fill_(i64, Scalar::of(0x1p63)); }).second,
            "value cannot be converted to type int64_t without overflow");
  EXPECT_EQ(kind_of([&] { fill_(i32, Scalar::of(-2147483648.5)); }), ErrorKind::Argument);
}

// A float16 result's mul and div by a one-element second operand of another dtype: 1.13 converts the operand to
// float16 first (2^31 becomes inf, 0.1 becomes 0.0999756), 2.1 on reads its original value in float
// (ReducedFloatScalarOperandInOpmath) and rounds only the result. The probe values of the 1.13.1 and 2.1.0 wheels.
TEST_F(ImplScalarEdges, AHalfProductReadsAOneElementSecondOperandInFloatSince2_1) {
  auto run = [] {
    const Tensor x = values({0, 1e-5, 2}, ScalarType::Float16), y = values({3, 7, 11}, ScalarType::Float16);
    const Tensor big = full({}, Scalar::of(2147483648.0), ScalarType::Float32);
    Tensor inplace = clone(x);
    mul_(inplace, big);
    return std::vector<std::vector<double>>{
        mul(x, big).to_vector(),   div(x, full({}, Scalar::of(1 / 2147483648.0), ScalarType::Float32)).to_vector(),
        inplace.to_vector(),       mul(x, Scalar::of(2147483648.0)).to_vector(),
        mul(y, Scalar::of(0.1)).to_vector(), mul(big, x).to_vector()};
  };
  const auto old = run();
  for (std::size_t i : {0, 1, 2, 3, 5}) {
    EXPECT_TRUE(std::isnan(old[i][0])) << i;
    EXPECT_EQ(old[i][1], INFINITY) << i;
  }
  EXPECT_EQ(old[4], (std::vector<double>{0.2998046875, 0.69970703125, 1.099609375}));
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  const auto now = run();
  for (std::size_t i : {0, 1, 2, 3}) EXPECT_EQ(now[i], (std::vector<double>{0, 21504, INFINITY})) << i;
  EXPECT_EQ(now[4], (std::vector<double>{0.300048828125, 0.7001953125, 1.099609375}));
  EXPECT_TRUE(std::isnan(now[5][0])) << "a one-element first operand is converted in every release";
}

// torch.tensor of a literal list stores each element as Python does: cast into a float dtype, checked into an
// integral one (Python's names), nonzero into bool; nothing is a write, so the version is 0.
TEST_F(ImplScalarEdges, LiteralListElementsAreStoredAsPythonStoresThem) {
  using K = Scalar::Kind;
  const Tensor f = literal_tensor({{K::Float, 1.5}, {K::Int, 2}, {K::Bool, 1}, {K::Float, 1e39}}, {2, 2},
                                  ScalarType::Float32, true);
  EXPECT_EQ(f.sizes(), (Dims{2, 2}));
  EXPECT_EQ(f.to_vector(), (std::vector<double>{1.5, 2, 1, INFINITY}));
  EXPECT_EQ(f.version(), 0);
  EXPECT_TRUE(autograd::requires_grad(f));
  EXPECT_EQ(literal_tensor({{K::Float, 70000.0}}, {}, ScalarType::Float16).to_vector()[0], INFINITY);
  EXPECT_EQ(literal_tensor({{K::Float, NAN}, {K::Float, -0.0}, {K::Int, -3}}, {3}, ScalarType::Bool).to_vector(),
            (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(literal_tensor({{K::Float, -1.7}}, {1}, ScalarType::Int64).to_vector()[0], -1);
  EXPECT_EQ(error_of([&] { literal_tensor({{K::Int, 1}, {K::Float, NAN}}, {2}, ScalarType::Int32); }).second,
            "value cannot be converted to type int32 without overflow");
  EXPECT_EQ(error_of([&] { literal_tensor({{K::Int, 1}}, {1}, ScalarType::Int64, true); }).second,
            "Only Tensors of floating point and complex dtype can require gradients");
  // c10's range check took int64's largest value as a double (2^63) until FloatToIntegralRangeIsExact.
  EXPECT_EQ(literal_tensor({{K::Float, 0x1p63}}, {1}, ScalarType::Int64).to_vector()[0], -0x1p63);
  EXPECT_EQ(kind_of([&] { literal_tensor({{K::Float, 2147483647.5}}, {1}, ScalarType::Int32); }), ErrorKind::Argument);
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_EQ(error_of([&] { literal_tensor({{K::Float, 0x1p63}}, {1}, ScalarType::Int64); }).second,
            "value cannot be converted to type int64 without overflow");
  EXPECT_EQ(literal_tensor({{K::Float, 2147483647.5}}, {1}, ScalarType::Int32).to_vector()[0], 2147483647);
}

}  // namespace
}  // namespace parity::impl::testing
