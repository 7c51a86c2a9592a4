// Unit tests of impl's pointwise ops (arithmetic, activations, clamp, masked_fill, addcmul, their in-place and out=
// forms) against behaviour observed on LibTorch 1.13: values, dtypes, strides, graphs, saved tensors, versions and
// error kinds.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "tests/support/impl_release.h"
#include "tests/support/impl_tensors.h"

namespace parity::impl {
namespace {

using autograd::grad;
using autograd::grad_fn;
using testing::bools;
using testing::error_of;
using testing::expect_error;
using testing::expect_values;
using testing::graph;
using testing::kind_of;
using testing::kInf;
using testing::kNaN;
using testing::leaf;
using testing::seq;
using testing::values;

// The release these suites expect LibTorch's behaviour of (tests/support/impl_release.h).
class ImplPointwise : public parity::testing::FollowsTorch113 {};
class OutVariants : public parity::testing::FollowsTorch113 {};

// ---------------------------------------------------------------------------------------------------------
// Activations

TEST_F(ImplPointwise, ResultDtypesAndDtypeErrors) {
  Tensor i = values({-3, 0, 2}, ScalarType::Int64);
  Tensor b = values({1, 0, 1}, ScalarType::Bool);
  EXPECT_EQ(sigmoid(i).dtype(), ScalarType::Float32);
  EXPECT_EQ(sigmoid(b).dtype(), ScalarType::Float32);
  EXPECT_EQ(tanh(i).dtype(), ScalarType::Float32);
  EXPECT_EQ(sigmoid(values({1}, ScalarType::Float64)).dtype(), ScalarType::Float64);
  EXPECT_EQ(relu(i).dtype(), ScalarType::Int64);
  EXPECT_EQ(abs(i).dtype(), ScalarType::Int64);
  auto [relu_kind, relu_msg] = error_of([&] { relu(b); });
  EXPECT_EQ(relu_kind, ErrorKind::DType);
  EXPECT_EQ(relu_msg, "Boolean inputs not supported for relu");
  auto [abs_kind, abs_msg] = error_of([&] { abs(b); });
  EXPECT_EQ(abs_kind, ErrorKind::DType);
  EXPECT_EQ(abs_msg, "\"abs_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(testing::error_of([&] { abs_(clone(b)); }).first, ErrorKind::DType);
  EXPECT_EQ(testing::error_of([&] { relu_(clone(b)); }).first, ErrorKind::DType);
  auto [cast_kind, cast_msg] = error_of([&] { sigmoid_(clone(i)); });
  EXPECT_EQ(cast_kind, ErrorKind::DType);
  EXPECT_EQ(cast_msg, "result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(testing::error_of([&] { exp_(clone(i)); }).first, ErrorKind::DType);
  EXPECT_EQ(testing::error_of([&] { tanh_(clone(b)); }).first, ErrorKind::DType);
  Tensor r = clone(i);
  relu_(r);
  EXPECT_EQ(r.version(), 1u);
  EXPECT_EQ(r.to_vector(), (std::vector<double>{0, 0, 2}));
}

// int32 follows c10's lattice (bool < int32 < int64 < float) and its own names in messages: LibTorch 1.13's
// results for each call.
TEST_F(ImplPointwise, Int32PromotesAndNamesItselfAsLibTorchDoes) {
  const ScalarType I = ScalarType::Int32;
  Tensor i = values({-3, 0, 2}, I);
  Tensor l = values({1, 2, 3}, ScalarType::Int64);
  EXPECT_EQ(add(i, l).dtype(), ScalarType::Int64);
  EXPECT_EQ(mul(i, Scalar::of_int(2)).dtype(), I);
  EXPECT_EQ(add(i, Scalar::of(2.5)).dtype(), ScalarType::Float32);
  EXPECT_EQ(add(i, values({5}, ScalarType::Int64)).dtype(), ScalarType::Int64);  // dimensioned
  EXPECT_EQ(add(i, sum(l)).dtype(), I);  // a zero-dim int64 of the same category does not promote
  EXPECT_EQ(sum(i).dtype(), ScalarType::Int64);
  EXPECT_EQ(div(i, l).dtype(), ScalarType::Float32);
  EXPECT_EQ(exp(i).dtype(), ScalarType::Float32);
  EXPECT_EQ(relu(i).dtype(), I);
  EXPECT_EQ(abs(i).dtype(), I);
  EXPECT_EQ(mm(view(i, {3, 1}), view(i, {1, 3})).dtype(), I);
  EXPECT_EQ(clamp(i, Scalar::of(0.5), Scalar::of(1.5)).dtype(), ScalarType::Float32);
  EXPECT_EQ(masked_fill(i, values({1, 0, 1}, ScalarType::Bool), Scalar::of(2.5)).dtype(), I);
  EXPECT_EQ(where(values({1, 0, 1}, ScalarType::Bool), i, l).dtype(), ScalarType::Int64);
  EXPECT_EQ(arange(5, I).dtype(), I);
  EXPECT_EQ(copy_(clone(i), values({2.7, 2.7, 2.7}, ScalarType::Float64)).to_vector(), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(error_of([&] { mean(i); }).second,
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Int");
  EXPECT_EQ(error_of([&] { fill_(clone(i), Scalar::of_int(3000000000)); }).second,
            "value cannot be converted to type int without overflow");
  EXPECT_EQ(error_of([&] { sigmoid_(clone(i)); }).second, "result type Float can't be cast to the desired output type Int");
  EXPECT_EQ(error_of([&] { index(l, i); }).second, "tensors used as indices must be long, byte or bool tensors");
  EXPECT_EQ(error_of([&] { index_put_(clone(i), l, l, false); }).second,
            "Index put requires the source and destination dtypes match, got Int for the destination and Long for the "
            "source.");
  EXPECT_EQ(testing::error_of([&] { requires_grad_(clone(i), true); }).first, ErrorKind::DType);
}

// The 16-bit floats round to nearest-even as c10's do, promote as c10's lattice says, and LibTorch 1.13's CPU
// kernels that leave out Half raise for it (LibTorch's results and messages for each call).
TEST_F(ImplPointwise, SixteenBitFloatsRoundPromoteAndRaiseAsLibTorchDoes) {
  EXPECT_EQ(static_cast<float>(Half(1.0f + 0x1.0p-11f)), 1.0f);              // a tie goes to the even neighbour
  EXPECT_EQ(static_cast<float>(Half(1.0f + 0x1.8p-11f)), 1.0f + 0x1.0p-10f);  // above the tie: up
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(65520.0f))));
  EXPECT_EQ(static_cast<float>(Half(0x1.0p-24f)), 0x1.0p-24f);  // the smallest subnormal
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f + 0x1.0p-8f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f + 0x1.8p-8f)), 1.0f + 0x1.0p-7f);
  const ScalarType H = ScalarType::Float16, B = ScalarType::BFloat16;
  Tensor h = values({-1.5, 0.25, 2}, H), b = values({-1.5, 0.25, 2}, B);
  EXPECT_EQ(add(h, b).dtype(), ScalarType::Float32);
  EXPECT_EQ(add(h, values({1, 1, 1})).dtype(), ScalarType::Float32);
  EXPECT_EQ(mul(h, Scalar::of(2.5)).dtype(), H);
  EXPECT_EQ(add(b, Scalar::of_int(1)).dtype(), B);
  EXPECT_EQ(exp(b).dtype(), B);
  EXPECT_EQ(error_of([&] { exp(h); }).second, "\"exp_vml_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { sigmoid(h); }).second, "\"sigmoid_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { relu(h); }).second, "\"clamp_min_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { clamp(h, Scalar::of(0), Scalar::of(1)); }).second, "\"clamp_scalar_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { mm(view(h, {3, 1}), view(h, {1, 3})); }).second, "\"addmm_impl_cpu_\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { addcmul(h, h, h, Scalar::of(1)); }).second, "\"addcmul_cpu_out\" not implemented for 'Half'");
  EXPECT_EQ(error_of([&] { fill_(clone(h), Scalar::of(1e5)); }).second, "value cannot be converted to type at::Half without overflow");
  EXPECT_EQ(abs(h).dtype(), H);
  // sum accumulates in float: 1 + 3 * 2^-11 is 1.001953125 in Half, where a Half accumulator stays at 1.
  const double e = 1.0 / 2048;
  EXPECT_EQ(sum(values({1, e, e, e}, H)).to_vector(), (std::vector<double>{1.001953125}));
  // bmm accumulates in the element type: bfloat16's ties to even keep 1 + 3 * 2^-8 at 1.
  const double f = 1.0 / 256;
  EXPECT_EQ(matmul(view(values({1, f, f, f}, B), {1, 1, 4}), view(ones({4}, B), {1, 4, 1})).to_vector(),
            (std::vector<double>{1}));
  EXPECT_EQ(pow(values({-0.0}, H), Scalar::of(-0.5)).to_vector(), (std::vector<double>{kInf}));
  EXPECT_EQ(pow(values({-0.0}), Scalar::of(-0.5)).to_vector(), (std::vector<double>{-kInf}));
  // bfloat16 x^-0.5 is 1 / sqrt(x) with the root rounded to bfloat16 first (0.0698242188 gives 3.796875), except
  // in the vectorised loop's blocks of 32 elements of a dense tensor, which round once (3.78125).
  EXPECT_EQ(pow(values({0.0698242188}, B), Scalar::of(-0.5)).to_vector(), (std::vector<double>{3.796875}));
  const std::vector<double> r = pow(full({36}, Scalar::of(0.0698242188), B), Scalar::of(-0.5)).to_vector();
  EXPECT_EQ(r[31], 3.78125);
  EXPECT_EQ(r[32], 3.796875);
}

TEST_F(ImplPointwise, Values) {
  Tensor x = values({-2, -0.5, 0, 0.5, 1, 2, kNaN});
  expect_values(sigmoid(x), {0.119203, 0.377541, 0.5, 0.622459, 0.731059, 0.880797, kNaN});
  expect_values(tanh(x), {-0.964028, -0.462117, 0, 0.462117, 0.761594, 0.964028, kNaN});
  expect_values(relu(x), {0, 0, 0, 0.5, 1, 2, kNaN});
  expect_values(abs(x), {2, 0.5, 0, 0.5, 1, 2, kNaN});
  expect_values(sigmoid(values({-100, 100})), {0, 1});
  // relu keeps -0 (max(-0, 0) is the first argument); abs of the most negative int64 wraps.
  EXPECT_TRUE(std::signbit(relu(values({-0.0})).to_vector()[0]));
  Tensor lowest = values({-9223372036854775808.0}, ScalarType::Int64);
  EXPECT_EQ(abs(lowest).to_vector()[0], -9223372036854775808.0);
  expect_values(sigmoid(values({-3, 0, 2}, ScalarType::Int64)), {0.0474259, 0.5, 0.880797});
}

// A Scalar operand reaches the kernel as at::scalar_to_tensor's wrapped number (int64, float64 or bool) cast to
// the dtype the op computes in: an int32 wraps, a 16-bit float rounds from the double. In place too, where the
// target still must not overlap itself.
TEST_F(ImplPointwise, AScalarOperandIsTheWrappedNumberCastToTheComputeType) {
  struct Case {
    ScalarType dtype;
    Scalar s;
  };
  const Scalar true_scalar{Scalar::Kind::Bool, 1};
  const std::vector<Case> cases = {
      {ScalarType::Int32, Scalar::of_int((std::int64_t{1} << 40) + 7)}, {ScalarType::Int32, Scalar::of_int(-3)},
      {ScalarType::Int64, Scalar::of_int(-(std::int64_t{1} << 40))},   {ScalarType::Float16, Scalar::of(0.1)},
      {ScalarType::Float16, Scalar::of_int(2049)},                      {ScalarType::BFloat16, Scalar::of(1.0 / 3)},
      {ScalarType::Float32, Scalar::of(0.1)},                           {ScalarType::Float32, Scalar::of_int(16777217)},
      {ScalarType::Float64, Scalar::of(0.1)},                           {ScalarType::Bool, true_scalar},
  };
  for (const Case& c : cases) {
    const ScalarType wrapped = c.s.kind == Scalar::Kind::Int    ? ScalarType::Int64
                               : c.s.kind == Scalar::Kind::Bool ? ScalarType::Bool
                                                                : ScalarType::Float64;
    const double cast = to(full({}, c.s, wrapped), c.dtype).to_vector()[0];
    SCOPED_TRACE(std::string(type_name(c.dtype)) + " + " + std::to_string(c.s.value));
    const Tensor out = add(zeros({2}, c.dtype), c.s);
    EXPECT_EQ(out.dtype(), c.dtype);
    EXPECT_EQ(out.to_vector(), (std::vector<double>{cast, cast}));
    const Tensor self = zeros({2}, c.dtype);
    add_(self, c.s);
    EXPECT_EQ(self.to_vector(), (std::vector<double>{cast, cast}));
  }
  EXPECT_EQ(add(zeros({1}, ScalarType::Int32), Scalar::of_int((std::int64_t{1} << 40) + 7)).to_vector()[0], 7);
  const Tensor expanded = expand(zeros({1}, ScalarType::Float32), {3});
  EXPECT_EQ(kind_of([&] { add_(expanded, Scalar::of(1)); }), ErrorKind::Overlap);
  EXPECT_EQ(kind_of([&] { mul_(expanded, Scalar::of(2)); }), ErrorKind::Overlap);
}

// Integer arithmetic wraps as two's complement, as ATen's kernels do on every machine it runs on: max + 1 is
// min, -min is min, 65536^2 is 0 in int32, and so does index_put_'s accumulation (in C++ each is signed
// overflow, which the kernels avoid).
TEST_F(ImplPointwise, IntegerArithmeticWraps) {
  const double max32 = 2147483647.0, min32 = -2147483648.0, min64 = -9223372036854775808.0;
  auto i32 = [](double v) { return values({v}, ScalarType::Int32); };
  EXPECT_EQ(add(i32(max32), i32(1)).to_vector()[0], min32);
  EXPECT_EQ(sub(i32(min32), i32(1)).to_vector()[0], max32);
  EXPECT_EQ(mul(i32(max32), i32(2)).to_vector()[0], -2.0);
  EXPECT_EQ(mul(i32(min32), Scalar::of_int(-1)).to_vector()[0], min32);
  EXPECT_EQ(neg(i32(min32)).to_vector()[0], min32);
  EXPECT_EQ(neg(values({min64}, ScalarType::Int64)).to_vector()[0], min64);
  EXPECT_EQ(pow(i32(65536), Scalar::of_int(2)).to_vector()[0], 0.0);
  EXPECT_EQ(pow(i32(3), Scalar::of_int(21)).to_vector()[0], 1870418611.0);  // 3^21 mod 2^32, as int32
  const Tensor acc = i32(max32);
  index_put_(acc, values({0, 0}, ScalarType::Int64), values({1, 1}, ScalarType::Int32), /*accumulate=*/true);
  EXPECT_EQ(acc.to_vector()[0], -2147483647.0);
}

// Integral sums wrap around in int64 as ATen's do: two INT64_MIN make 0, and 2^53 + 1 stays exact (a double
// accumulator gave INT64_MIN and 2^53).
TEST_F(ImplPointwise, IntegralSumsWrapAndStayExact) {
  Tensor lows = full({2}, Scalar::of_int(std::numeric_limits<std::int64_t>::min()), ScalarType::Int64);
  EXPECT_EQ(sum(lows).to_vector(), (std::vector<double>{0}));
  Tensor big = full({1}, Scalar::of_int(std::int64_t{1} << 53), ScalarType::Int64);
  Tensor one = ones({1}, ScalarType::Int64);
  Tensor s = sum(add(big, one));
  EXPECT_EQ(s.data<std::int64_t>()[0], (std::int64_t{1} << 53) + 1);
  EXPECT_EQ(sum(ones({3}, ScalarType::Bool)).to_vector(), (std::vector<double>{3}));
}

// make_dim_mask wraps a 0-dim tensor's dims to 0, so [0, -1] names it twice there as on a 1-d tensor (the 1.13.1 and
// 2.3.0 wheels raise for both), while [0] alone sums it.
TEST_F(ImplPointwise, AReductionRefusesADimNamedTwiceEvenOfA0DimTensor) {
  for (const Tensor& x : {full({}, Scalar::of(2), ScalarType::Float32), ones({3}, ScalarType::Float32)})
    for (const Dims& dims : {Dims{0, 0}, Dims{0, -1}, Dims{-1, -1}})
      expect_error([&] { sum(x, dims, false); }, ErrorKind::IndexRange, "dim 0 appears multiple times in the list of dims");
  EXPECT_EQ(sum(full({}, Scalar::of(2), ScalarType::Float32), Dims{0}, false).to_vector(), (std::vector<double>{2}));
}

TEST_F(ImplPointwise, OutputKeepsTheInputsStrideOrder) {
  Tensor xt = transpose(seq({3, 4}), 0, 1);
  EXPECT_EQ(sigmoid(xt).strides(), (Dims{1, 4}));
  Tensor it = transpose(view(arange(12, ScalarType::Int64), {3, 4}), 0, 1);
  Tensor s = sigmoid(it);  // converted to float first, keeping the order
  EXPECT_EQ(s.dtype(), ScalarType::Float32);
  EXPECT_EQ(s.strides(), (Dims{1, 4}));
  EXPECT_EQ(relu(it).strides(), (Dims{1, 4}));
  EXPECT_EQ(clamp(it, Scalar::of(0.5), Scalar::of(2.5)).strides(), (Dims{1, 4}));
  EXPECT_EQ(abs(expand(seq({3, 1}), {3, 4})).strides(), (Dims{4, 1}));
}

TEST_F(ImplPointwise, ClampPromotesWithItsBoundsAndChecksThem) {
  Tensor b = values({1, 0, 1}, ScalarType::Bool);
  Tensor i = values({-3, 0, 2}, ScalarType::Int64);
  Tensor bi = clamp(b, Scalar::of_int(0), Scalar::of_int(1));
  EXPECT_EQ(bi.dtype(), ScalarType::Int64);
  Tensor fi = clamp(i, Scalar::of(-0.5), Scalar::of(1.5));
  EXPECT_EQ(fi.dtype(), ScalarType::Float32);
  expect_values(fi, {-0.5, 0, 1.5});
  EXPECT_EQ(clamp(i, Scalar::of_int(-1), Scalar::of_int(1)).to_vector(), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(clamp(view(values({1}, ScalarType::Bool), {}), Scalar::of_int(0), std::nullopt).dtype(),
            ScalarType::Int64);
  auto [none_kind, none_msg] = error_of([&] { clamp(i, std::nullopt, std::nullopt); });
  EXPECT_EQ(none_kind, ErrorKind::Argument);
  EXPECT_EQ(none_msg, "torch.clamp: At least one of 'min' or 'max' must not be None");
  auto [cast_kind, cast_msg] = error_of([&] { clamp_(clone(i), Scalar::of(0.5), Scalar::of(2.5)); });
  EXPECT_EQ(cast_kind, ErrorKind::DType);
  EXPECT_EQ(cast_msg, "result type Float can't be cast to the desired output type long int");
  EXPECT_EQ(error_of([&] { clamp_(clone(b), Scalar::of_int(0), Scalar::of_int(1)); }).second,
            "result type Long can't be cast to the desired output type bool");
  Scalar no{Scalar::Kind::Bool, 0}, yes{Scalar::Kind::Bool, 1};
  EXPECT_EQ(error_of([&] { clamp(b, no, yes); }).second, "\"clamp_scalar_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([&] { clamp(b, no, std::nullopt); }).second, "\"clamp_min_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([&] { clamp(b, std::nullopt, yes); }).second,
            "\"clamp_max_scalar_cpu\" not implemented for 'Bool'");
  Tensor f = values({1, 2, 3});
  EXPECT_EQ(testing::error_of([&] { clamp(f, Scalar::of(1e300), std::nullopt); }).first, ErrorKind::Argument);
  EXPECT_EQ(testing::error_of([&] { clamp(i, Scalar::of(1e300), std::nullopt); }).first, ErrorKind::Argument);
  EXPECT_EQ(testing::error_of([&] { clamp_(clone(f), Scalar::of(1e300), std::nullopt); }).first, ErrorKind::Argument);
}

TEST_F(ImplPointwise, ClampValuesWithCrossedAndNaNBounds) {
  Tensor x = values({-2, -0.5, 0, 0.5, 1, 2, kNaN});
  expect_values(clamp(x, Scalar::of(-0.5), Scalar::of(1)), {-0.5, -0.5, 0, 0.5, 1, 1, kNaN});
  expect_values(clamp(x, Scalar::of(1), Scalar::of(-0.5)), {-0.5, -0.5, -0.5, -0.5, -0.5, -0.5, kNaN});
  // A NaN bound: with both bounds the result is all NaN (even when the other would not fit); alone it is
  // ignored.
  expect_values(clamp(x, Scalar::of(kNaN), Scalar::of(1)), std::vector<double>(7, kNaN));
  expect_values(clamp(x, Scalar::of(1e300), Scalar::of(kNaN)), std::vector<double>(7, kNaN));
  expect_values(clamp(x, Scalar::of(kNaN), std::nullopt), {-2, -0.5, 0, 0.5, 1, 2, kNaN});
  expect_values(clamp(x, std::nullopt, Scalar::of(kNaN)), {-2, -0.5, 0, 0.5, 1, 2, kNaN});
}

TEST_F(ImplPointwise, GradFnsAndGradients) {
  Tensor x = leaf({-2, -0.5, 0, 0.5, 1, 2, kNaN});
  auto grad_of = [&](const std::function<Tensor()>& f, const char* name) {
    Tensor y = f();
    EXPECT_EQ(grad_fn(y)->name(), name);
    backward(sum(y));
    Tensor g = grad(x);
    autograd::materialize(x).grad = Tensor();
    return g;
  };
  expect_values(grad_of([&] { return sigmoid(x); }, "SigmoidBackward0"),
                {0.104994, 0.235004, 0.25, 0.235004, 0.196612, 0.104994, kNaN});
  expect_values(grad_of([&] { return tanh(x); }, "TanhBackward0"),
                {0.0706508, 0.786448, 1, 0.786448, 0.419974, 0.0706508, kNaN});
  // threshold_backward on the result: 0 where result <= 0, so a NaN result passes the gradient.
  expect_values(grad_of([&] { return relu(x); }, "ReluBackward0"), {0, 0, 0, 1, 1, 1, 1});
  // grad * sgn(self): sgn(0) = sgn(NaN) = 0.
  expect_values(grad_of([&] { return abs(x); }, "AbsBackward0"), {-1, -1, 0, 1, 1, 1, 0});
  // clamp_backward: the gradient passes where min <= self <= max, bounds included, NaN excluded.
  expect_values(grad_of([&] { return clamp(x, Scalar::of(-0.5), Scalar::of(1)); }, "ClampBackward1"),
                {0, 1, 1, 1, 1, 0, 0});
  expect_values(grad_of([&] { return clamp(x, Scalar::of(-0.5), std::nullopt); }, "ClampBackward1"),
                {0, 1, 1, 1, 1, 1, 0});
  expect_values(grad_of([&] { return clamp(x, std::nullopt, Scalar::of(1)); }, "ClampBackward1"),
                {1, 1, 1, 1, 1, 0, 0});
  expect_values(grad_of([&] { return clamp(x, Scalar::of(1), Scalar::of(-0.5)); }, "ClampBackward1"),
                std::vector<double>(7, 0));
  expect_values(grad_of([&] { return clamp(x, Scalar::of(kNaN), std::nullopt); }, "ClampBackward1"),
                std::vector<double>(7, 0));
}

// Near saturation 1 - y * y cancels, and LibTorch computes it as one fused multiply-add: the float gradient is
// 1 - y^2 rounded once. Double computes that exactly (a float's square fits in one, and Sterbenz's lemma makes the
// difference exact); rounding y * y to float first would miss it by hundreds of ulps (at tanh(4): 0.0013408661
// against LibTorch's 0.0013408931).
TEST_F(ImplPointwise, TanhsGradientRoundsOneMinusTheSquareOnce) {
  for (const std::vector<double>& in : {std::vector<double>{4}, {2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7}}) {
    Tensor x = leaf(in);
    Tensor y = tanh(x);
    backward(sum(y));
    std::vector<double> want;
    for (double v : y.to_vector()) want.push_back(static_cast<float>(1 - v * v));
    EXPECT_EQ(grad(x).to_vector(), want);
  }
}

// log is float32 std::log elementwise (integers computed as float32); its gradient grad / self reads the input.
TEST_F(ImplPointwise, LogValuesDtypesAndGradient) {
  const std::vector<double> in = {0.25, 0.5, 1, 2, 3};
  std::vector<double> logs, inverses;
  for (double v : in) {
    logs.push_back(std::log(static_cast<float>(v)));
    inverses.push_back(1 / v);
  }
  Tensor x = leaf(in);
  Tensor y = log(x);
  expect_values(y, logs);
  EXPECT_EQ(grad_fn(y)->name(), "LogBackward0");
  backward(sum(y));
  expect_values(grad(x), inverses);
  const std::vector<double> edge = log(values({0, -1})).to_vector();
  EXPECT_TRUE(std::isinf(edge[0]) && edge[0] < 0);
  EXPECT_TRUE(std::isnan(edge[1]));
  Tensor i = values({1, 2}, ScalarType::Int64);
  EXPECT_EQ(log(i).dtype(), ScalarType::Float32);
  EXPECT_EQ(log(values({1, 0}, ScalarType::Bool)).dtype(), ScalarType::Float32);
  expect_error([&] { log_(i); }, ErrorKind::DType, "result type Float can't be cast to the desired output type Long");
}

// sqrt is float32 std::sqrt elementwise; its gradient grad / (2 * result) reads the result.
TEST_F(ImplPointwise, SqrtValuesDtypesAndGradient) {
  const std::vector<double> in = {0.25, 0.5, 1, 2, 3};
  std::vector<double> roots, slopes;
  for (double v : in) {
    roots.push_back(std::sqrt(static_cast<float>(v)));
    slopes.push_back(0.5 / std::sqrt(v));
  }
  Tensor x = leaf(in);
  Tensor y = sqrt(x);
  expect_values(y, roots);
  EXPECT_EQ(grad_fn(y)->name(), "SqrtBackward0");
  backward(sum(y));
  expect_values(grad(x), slopes);
  EXPECT_TRUE(std::isnan(sqrt(values({-1})).to_vector()[0]));
  Tensor i = values({4, 9}, ScalarType::Int64);
  EXPECT_EQ(sqrt(i).dtype(), ScalarType::Float32);
  expect_error([&] { sqrt_(i); }, ErrorKind::DType, "result type Float can't be cast to the desired output type Long");
  Tensor z = leaf({1, 4});
  Tensor r = sqrt(z);
  Tensor s = sum(r);
  mul_(r, Scalar::of(2));  // the saved result
  EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
}

// sin is float32 std::sin elementwise; its gradient grad * cos(self) reads the input, and under create_graph
// records cos's node.
TEST_F(ImplPointwise, SinValuesDtypesAndGradient) {
  const std::vector<double> in = {-2, -0.5, 0, 1, 3};
  std::vector<double> sines, slopes;
  for (double v : in) {
    sines.push_back(std::sin(static_cast<float>(v)));
    slopes.push_back(std::cos(v));
  }
  Tensor x = leaf(in);
  Tensor y = sin(x);
  expect_values(y, sines);
  EXPECT_EQ(grad_fn(y)->name(), "SinBackward0");
  backward(sum(y), /*retain_graph=*/true);
  expect_values(grad(x), slopes);
  Tensor i = values({1, 2}, ScalarType::Int64);
  EXPECT_EQ(sin(i).dtype(), ScalarType::Float32);
  EXPECT_EQ(sin(values({1, 0}, ScalarType::Bool)).dtype(), ScalarType::Float32);
  expect_error([&] { sin_(i); }, ErrorKind::DType, "result type Float can't be cast to the desired output type Long");
  Tensor z = leaf({0.5, 1});
  Tensor s = sum(sin(z));
  const Tensor g = autograd_grad(s, z, /*retain_graph=*/true, /*allow_unused=*/false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "MulBackward0");
  backward(sum(g));  // d/dz of cos(z) is -sin(z), through CosBackward0
  expect_values(grad(z), {-std::sin(0.5), -std::sin(1.0)});
}

// cos is float32 std::cos elementwise; its gradient grad * -sin(self) reads the input, and under create_graph
// records sin's node.
TEST_F(ImplPointwise, CosValuesDtypesAndGradient) {
  const std::vector<double> in = {-2, -0.5, 0, 1, 3};
  std::vector<double> cosines, slopes;
  for (double v : in) {
    cosines.push_back(std::cos(static_cast<float>(v)));
    slopes.push_back(-std::sin(v));
  }
  Tensor x = leaf(in);
  Tensor y = cos(x);
  expect_values(y, cosines);
  EXPECT_EQ(grad_fn(y)->name(), "CosBackward0");
  backward(sum(y));
  expect_values(grad(x), slopes);
  Tensor i = values({1, 2}, ScalarType::Int64);
  EXPECT_EQ(cos(i).dtype(), ScalarType::Float32);
  expect_error([&] { cos_(i); }, ErrorKind::DType, "result type Float can't be cast to the desired output type Long");
  Tensor z = leaf({0.5, 1});
  const Tensor g = autograd_grad(sum(cos(z)), z, /*retain_graph=*/true, /*allow_unused=*/false, /*create_graph=*/true);
  backward(sum(g));  // d/dz of -sin(z) is -cos(z), through SinBackward0
  expect_values(grad(z), {-std::cos(0.5), -std::cos(1.0)});
}

TEST_F(ImplPointwise, SavedResultOrSelfDecidesWhichWritesBreakBackward) {
  for (auto f : {+[](const Tensor& t) { return sigmoid(t); }, +[](const Tensor& t) { return tanh(t); },
                 +[](const Tensor& t) { return relu(t); }}) {
    Tensor x = leaf({-1, 0.5, 2});
    Tensor y = f(x);
    Tensor s = sum(y);
    mul_(y, Scalar::of(2));  // the saved result
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
  for (auto f : {+[](const Tensor& t) { return abs(t); },
                 +[](const Tensor& t) { return clamp(t, Scalar::of(0), Scalar::of(1)); }}) {
    Tensor x = leaf({-1, 0.5, 2});
    Tensor y = mul(x, Scalar::of(1));
    Tensor z = f(y);
    Tensor s = sum(z);
    mul_(z, Scalar::of(2));  // the result is not saved
    EXPECT_NO_THROW(backward(s, /*retain_graph=*/true));
    mul_(y, Scalar::of(2));  // self is
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
}

TEST_F(ImplPointwise, InPlaceOnNonLeafRecordsTheSameNodes) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    bool saves_result;
  };
  const std::vector<Case> cases = {
      {"SigmoidBackward0", [](const Tensor& t) { return sigmoid_(t); }, true},
      {"TanhBackward0", [](const Tensor& t) { return tanh_(t); }, true},
      {"ReluBackward0", [](const Tensor& t) { return relu_(t); }, true},
      {"ExpBackward0", [](const Tensor& t) { return exp_(t); }, true},
      {"SqrtBackward0", [](const Tensor& t) { return sqrt_(t); }, true},
      {"LogBackward0", [](const Tensor& t) { return log_(t); }, false},
      {"SinBackward0", [](const Tensor& t) { return sin_(t); }, false},
      {"CosBackward0", [](const Tensor& t) { return cos_(t); }, false},
      {"AbsBackward0", [](const Tensor& t) { return abs_(t); }, false},
      {"ClampBackward1", [](const Tensor& t) { return clamp_(t, Scalar::of(0.1), Scalar::of(0.5)); }, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = leaf({-1, 0.25, 2});
    Tensor y = mul(x, Scalar::of(1));
    Tensor r = c.op(y);
    EXPECT_TRUE(r.is_same(y));
    EXPECT_EQ(y.version(), 1u);
    EXPECT_EQ(graph(y), std::string(c.name) + "(MulBackward1(Acc))");
    mul_(y, Scalar::of(2));
    // The in-place result is saved by the first five; log_, abs_ and clamp_ keep a copy of self from before.
    if (c.saves_result) EXPECT_EQ(testing::error_of([&] { backward(sum(y)); }).first, ErrorKind::VersionMismatch);
    else EXPECT_NO_THROW(backward(sum(y)));
  }
  Tensor x = leaf({-1, 0.25, 2});
  Tensor y = mul(x, Scalar::of(1));
  clamp_(y, Scalar::of(0.1), Scalar::of(0.5));
  backward(sum(y));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{0, 1, 0}));
  Tensor a = mul(x, Scalar::of(1));
  abs_(a);
  backward(sum(a));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{-1, 2, 1}));  // accumulated onto clamp's
}

TEST_F(ImplPointwise, InPlaceChecksComeInLibTorchsOrder) {
  Tensor x = leaf({1, 2});
  EXPECT_EQ(testing::error_of([&] { sigmoid_(x); }).first, ErrorKind::LeafInPlace);
  EXPECT_EQ(testing::error_of([&] { clamp_(x, std::nullopt, std::nullopt); }).first, ErrorKind::LeafInPlace);  // before None
  EXPECT_EQ(testing::error_of([&] { relu_(slice(x, 0, 0, 1, 1)); }).first, ErrorKind::LeafInPlace);
  Tensor ib = expand(values({1}, ScalarType::Int64), {3});
  Tensor bb = expand(values({1}, ScalarType::Bool), {3});
  Tensor fb = expand(values({1}), {3});
  // TensorIterator's overlap check precedes its cast check; clamp_'s meta function casts-checks earlier.
  EXPECT_EQ(testing::error_of([&] { tanh_(ib); }).first, ErrorKind::Overlap);
  EXPECT_EQ(testing::error_of([&] { clamp_(ib, Scalar::of(0.5), Scalar::of(1.5)); }).first, ErrorKind::DType);
  EXPECT_EQ(testing::error_of([&] { sigmoid_(fb); }).first, ErrorKind::Overlap);
  EXPECT_EQ(testing::error_of([&] { relu_(bb); }).first, ErrorKind::DType);  // relu's own check comes first
  EXPECT_EQ(testing::error_of([&] { abs_(bb); }).first, ErrorKind::Overlap);
  EXPECT_EQ(fb.version(), 0u);
}

TEST_F(ImplPointwise, InPlaceOnAViewOfANonLeafGoesThroughCopySlices) {
  Tensor x = leaf({-1, 0, 1, 2});
  Tensor y = mul(x, Scalar::of(1));
  sigmoid_(slice(y, 0, 1, 3, 1));
  EXPECT_EQ(grad_fn(y)->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(y.version(), 1u);
  backward(sum(y));
  expect_values(grad(x), {1, 0.25, 0.196612, 1});
}

// masked_fill: the value where the mask holds (converted to self's dtype as fill_ converts it), a contiguous
// result of the broadcast shape out of place; the gradient zeroes what was filled and sums down to self's
// shape; the mask is saved and a non-bool mask is refused (LibTorch 2.x's check).
TEST_F(ImplPointwise, MaskedFillValuesGradientAndChecks) {
  const Tensor mask = from_values({1, 0, 1}, ScalarType::Bool);
  Tensor x = leaf({1, 2, 3});
  Tensor y = masked_fill(x, view(mask, {3}), Scalar::of(-0.5));
  EXPECT_EQ(y.to_vector(), (std::vector<double>{-0.5, 2, -0.5}));
  EXPECT_EQ(grad_fn(y)->name(), "MaskedFillBackward0");
  Tensor wide = masked_fill(x, expand(view(mask, {1, 3}), {2, 3}), Scalar::of(7));
  EXPECT_EQ(wide.sizes(), (Dims{2, 3}));
  EXPECT_EQ(wide.strides(), (Dims{3, 1}));
  backward(sum(wide));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{0, 2, 0}));
  EXPECT_EQ(masked_fill(arange(3, ScalarType::Int64), mask, Scalar::of(2.5)).to_vector(), (std::vector<double>{2, 1, 2}));
  EXPECT_EQ(masked_fill(bools({3}), mask, Scalar::of(0.5)).to_vector(), (std::vector<double>{1, 1, 1}));

  Tensor z = clone(seq({2, 3}));
  EXPECT_TRUE(masked_fill_(z, mask, Scalar::of(9)).is_same(z));
  EXPECT_EQ(z.version(), 1);
  expect_error([&] { masked_fill_(z, values({1, 0, 1}), Scalar::of(1)); }, ErrorKind::DType,
               "masked_fill_ only supports boolean masks, but got mask with dtype Float");
  expect_error([&] { masked_fill_(z, bools({2, 2, 3}), Scalar::of(1)); }, ErrorKind::Shape,
               "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]");
  expect_error([&] { masked_fill(z, bools({4}), Scalar::of(1)); }, ErrorKind::Shape,
               "The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1");
  // An expanded self is written anyway (ATen only warns): every shared slot receives the same value.
  Tensor e = expand(clone(seq({1})), {3});
  masked_fill_(e, mask, Scalar::of(4));
  EXPECT_EQ(e.to_vector(), (std::vector<double>{4, 4, 4}));

  Tensor m = clone(mask);
  Tensor w = masked_fill(leaf({1, 2, 3}), m, Scalar::of(0));
  fill_(m, Scalar::of(0));
  EXPECT_EQ(testing::error_of([&] { backward(sum(w)); }).first, ErrorKind::VersionMismatch);
}

// addcmul: self + value * t1 * t2 in the common dtype (the value converted to it first), each factor's
// gradient the output gradient times the other factor times the value; in place, LibTorch's check order.
TEST_F(ImplPointwise, AddcmulValuesGradientsAndChecks) {
  Tensor a = leaf({1, 1, 1}), b = leaf({2, 2, 2}), c = leaf({1, 2, 3});
  Tensor r = addcmul(a, b, c, Scalar::of(3));
  EXPECT_EQ(r.to_vector(), (std::vector<double>{7, 13, 19}));
  EXPECT_EQ(grad_fn(r)->name(), "AddcmulBackward0");
  backward(sum(r));
  EXPECT_EQ(grad(a).to_vector(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(grad(b).to_vector(), (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(grad(c).to_vector(), (std::vector<double>{6, 6, 6}));
  const Tensor i = arange(3, ScalarType::Int64);
  EXPECT_EQ(addcmul(i, i, i, Scalar::of(2.5)).to_vector(), (std::vector<double>{0, 3, 10}));
  EXPECT_EQ(addcmul(i, values({1, 1, 1}), values({1, 1, 1}), Scalar::of(1)).dtype(), ScalarType::Float32);
  expect_error([&] { addcmul(bools({3}), bools({3}), bools({3}), Scalar::of(1)); }, ErrorKind::DType,
               "\"addcmul_cpu_out\" not implemented for 'Bool'");
  Tensor t = transpose(clone(seq({2, 3})), 0, 1);
  EXPECT_EQ(addcmul(t, t, t, Scalar::of(1)).strides(), (Dims{1, 3}));

  Tensor self = clone(i);
  expect_error([&] { addcmul_(self, values({1, 1, 1}), values({1, 1, 1}), Scalar::of(1)); }, ErrorKind::DType,
               "result type Float can't be cast to the desired output type Long");
  expect_error([&] { addcmul_(self, seq({2, 3}), seq({1}), Scalar::of(1)); }, ErrorKind::Shape,
               "output with shape [3] doesn't match the broadcast shape [2, 3]");
  // Both factors written: the version error names tensor2, which AddcmulBackward0 unpacks first.
  Tensor f1 = mul(leaf({1, 1}), Scalar::of(1)), f2 = mul(leaf({1, 1}), Scalar::of(1));
  Tensor prod = addcmul(leaf({0, 0}), f1, f2, Scalar::of(1));
  exp_(f1);
  mul_(f2, Scalar::of(1));
  auto [k, m] = error_of([&] { backward(sum(prod)); });
  EXPECT_EQ(k, ErrorKind::VersionMismatch);
  EXPECT_NE(m.find("output 0 of MulBackward1"), std::string::npos) << m;
  EXPECT_TRUE(addcmul_(self, i, i, Scalar::of(1)).is_same(self));
  EXPECT_EQ(self.to_vector(), (std::vector<double>{0, 2, 6}));
  EXPECT_EQ(self.version(), 1);
}

// LibTorch's CPU addcmul adds its last product fused (impl/kernels/pointwise.h, AddcmulFn): the square of
// 2^31-1 in double, and of 4097 in float, rounds, so subtracting the exact square from the rounded one leaves
// -1, where rounding the product first would leave 0. Integers are exact either way.
TEST_F(ImplPointwise, AddcmulRoundsItsLastProductOnlyWithTheSumOnTheCpu) {
  const std::vector<double> minus_one(9, -1);
  for (const auto& [dtype, a] : {std::pair{ScalarType::Float64, 2147483647.0}, std::pair{ScalarType::Float32, 4097.0}}) {
    const Tensor x = full({9}, Scalar::of(a), dtype);
    const Tensor square = mul(x, x);
    EXPECT_EQ(addcmul(square, x, x, Scalar::of(-1)).to_vector(), minus_one) << type_name(dtype);
    EXPECT_EQ(addcmul_(clone(square), x, x, Scalar::of(-1)).to_vector(), minus_one) << type_name(dtype);
  }
  const Tensor i = full({2}, Scalar::of_int(3037000499), ScalarType::Int64);
  EXPECT_EQ(addcmul(mul(i, i), i, i, Scalar::of_int(-1)).to_vector(), (std::vector<double>{0, 0}));
}

// out= (at::add_out(out, a, b)): an out of another shape is resized in place (the same storage, grown, every
// tensor over it seeing it), laid out as a fresh result; its version moves once; it is returned.
TEST_F(OutVariants, AnOutOfAnotherShapeIsResizedOverItsOwnStorage) {
  Tensor out = values({7});
  const void* storage = out.storage().key();
  Tensor alias = view(out, {1});
  Tensor a = transpose(seq({3, 2}), 0, 1);  // [2, 3], column-major: the result takes its layout
  Tensor r = add_out(out, a, a);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(out.sizes(), (Dims{2, 3}));
  EXPECT_EQ(out.strides(), (Dims{1, 2}));
  EXPECT_EQ(out.storage().key(), storage);
  EXPECT_GE(alias.storage().nbytes(), 6 * sizeof(float));
  EXPECT_EQ(out.version(), 1u);
  const std::vector<double> twice = mul(a, Scalar::of_int(2)).to_vector();
  EXPECT_EQ(out.to_vector(), twice);
}

// An out of the right shape keeps its strides; one of another dtype takes the result cast into it, or refuses a
// result it cannot hold; an out that is also an input is not resized.
TEST_F(OutVariants, StridesDtypeAndReadWriteOuts) {
  Tensor a = seq({2, 3});
  Tensor out = transpose(empty({3, 2}, ScalarType::Float64), 0, 1);
  mul_out(out, a, a);
  EXPECT_EQ(out.strides(), (Dims{1, 2}));
  EXPECT_EQ(out.dtype(), ScalarType::Float64);
  EXPECT_NEAR(out.to_vector()[5], a.to_vector()[5] * a.to_vector()[5], 1e-6);
  Tensor ints = zeros({2, 3}, ScalarType::Int64);
  EXPECT_EQ(kind_of([&] { div_out(ints, ints, ints); }), ErrorKind::DType);  // true division: Float into Long
  Tensor row = seq({3});
  EXPECT_EQ(kind_of([&] { add_out(row, row, a); }), ErrorKind::Shape);  // [3] is read and written: no resize
  EXPECT_EQ(row.version(), 0u);
}

// VariableType's out= kernels refuse autograd: an input or out requiring grad with grad mode on. Under no_grad a
// leaf requiring grad is written like any tensor.
TEST_F(OutVariants, RefuseTensorsRequiringGradWhileGradModeIsOn) {
  Tensor a = seq({2}, /*requires_grad=*/true), b = seq({2});
  Tensor out = zeros({2}, ScalarType::Float32);
  EXPECT_EQ(kind_of([&] { sub_out(out, a, b); }), ErrorKind::OutRequiresGrad);
  Tensor leaf_out = requires_grad_(zeros({2}, ScalarType::Float32), true);
  EXPECT_EQ(kind_of([&] { sub_out(leaf_out, b, b); }), ErrorKind::OutRequiresGrad);
  EXPECT_EQ(out.version(), 0u);
  {
    autograd::NoGradGuard no_grad;
    sub_out(leaf_out, a, b);
  }
  EXPECT_EQ(leaf_out.version(), 1u);
  EXPECT_TRUE(autograd::is_leaf(leaf_out));
  EXPECT_EQ(grad_fn(leaf_out), nullptr);
}

// A unary op's out= form: the float ops cast their result into any out it fits (an int64 input computed in float32
// and written into float64), and refuse one it does not; neg and abs (TensorIterator's plain unary_op) take only an
// out of the input's dtype. Each writes out once, resized like the binary forms, and a written-to out that
// partly overlaps the input is refused before anything is written.
TEST_F(OutVariants, UnaryOutFormsCastOrRequireTheirDtype) {
  Tensor ints = to(seq({3}), ScalarType::Int64);
  Tensor wide = values({7, 7});
  EXPECT_TRUE(exp_out(wide, ints).is_same(wide));
  EXPECT_EQ(wide.dtype(), ScalarType::Float32);
  EXPECT_EQ(wide.sizes(), (Dims{3}));
  EXPECT_EQ(wide.to_vector(), exp(ints).to_vector());
  EXPECT_EQ(wide.version(), 1u);
  Tensor long_out = zeros({3}, ScalarType::Int64);
  EXPECT_EQ(error_of([&] { sigmoid_out(long_out, ints); }).second,
            "result type Float can't be cast to the desired output type Long");
  Tensor doubles = zeros({3}, ScalarType::Float64);
  EXPECT_EQ(error_of([&] { neg_out(doubles, seq({3})); }).second, "Found dtype Double but expected Float");
  EXPECT_EQ(error_of([&] { abs_out(doubles, ints); }).second, "Found dtype Double but expected Long");
  neg_out(long_out, ints);
  EXPECT_EQ(long_out.to_vector(), neg(ints).to_vector());
  EXPECT_EQ(doubles.version(), 0u);
  Tensor x = seq({4});
  EXPECT_EQ(kind_of([&] { sqrt_out(narrow(x, 0, 1, 3), narrow(x, 0, 0, 3)); }), ErrorKind::Overlap);
  EXPECT_EQ(x.version(), 0u);
  EXPECT_EQ(kind_of([&] { exp_out(doubles, seq({3}, /*requires_grad=*/true)); }), ErrorKind::OutRequiresGrad);
}

// eq.Tensor_out has no derivative, so nothing refuses a tensor requiring grad, even a leaf out written with grad
// mode on; its bool result is written into out's dtype, whichever it is.
TEST_F(OutVariants, ComparisonOutFormsTakeAnyDtypeAndNeverRefuseGrad) {
  Tensor a = seq({3}, /*requires_grad=*/true);
  Tensor leaf_out = requires_grad_(zeros({3}, ScalarType::Float32), true);
  EXPECT_TRUE(eq_out(leaf_out, a, a).is_same(leaf_out));
  EXPECT_EQ(leaf_out.to_vector(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(leaf_out.version(), 1u);
  EXPECT_TRUE(autograd::is_leaf(leaf_out));
  Tensor flags = zeros({0}, ScalarType::Bool);
  const Tensor cols = transpose(seq({3, 2}), 0, 1), row = seq({3});
  ne_out(flags, cols, row);
  EXPECT_EQ(flags.sizes(), (Dims{2, 3}));
  EXPECT_EQ(flags.strides(), ne(cols, row).strides());  // laid out as the fresh result
}

}  // namespace
}  // namespace parity::impl
