// Scalars at a dtype's edges, where ATen converts them and what it computes with them. Each expectation is what
// LibTorch 1.13 does (and 2.15 where a release is chosen), as the campaigns with edge scalars found it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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

}  // namespace
}  // namespace parity::impl::testing
