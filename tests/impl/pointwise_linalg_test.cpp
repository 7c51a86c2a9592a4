// Unit tests of impl's activations (sigmoid, tanh, relu, abs, clamp, in-place forms) and matrix products
// (mm, matmul) against behaviour observed on LibTorch 1.13: values, dtypes, strides, graphs, saved tensors,
// versions and error kinds.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "tests/support/impl_errors.h"

namespace parity::impl {
namespace {

using autograd::grad;
using autograd::grad_fn;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor values(const std::vector<double>& v, ScalarType t = ScalarType::Float32) { return from_values(v, t); }
Tensor leaf(const std::vector<double>& v) { return requires_grad_(values(v), true); }

// A fresh contiguous float tensor holding 1, 2, 3, ... (scaled down), optionally a leaf requiring grad.
Tensor seq(const Dims& sizes, bool requires_grad = false) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7) * 0.5 - 1;
  Tensor t = clone(view(values(v), sizes));
  return requires_grad ? requires_grad_(t, true) : t;
}

using testing::error_of;
ErrorKind kind_of(const std::function<void()>& f) { return error_of(f).first; }
void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  auto [k, m] = error_of(f);
  EXPECT_EQ(k, kind) << m;
  EXPECT_EQ(m, message);
}

Tensor bools(const Dims& sizes) { return full(sizes, Scalar::of(1), ScalarType::Bool); }

// The graph below t as name(next, ...), "Acc" for a leaf's accumulator and "_" for an input without grad.
std::string graph(const Rc<autograd::Node>& n) {
  if (!n) return "-";
  if (n->name() == "torch::autograd::AccumulateGrad") return "Acc";
  std::string inner;
  for (const auto& e : n->next_edges()) {
    if (!inner.empty()) inner += ",";
    inner += e.valid() ? graph(e.fn) : "_";
  }
  return n->name() + "(" + inner + ")";
}
std::string graph(const Tensor& t) { return graph(grad_fn(t)); }

void expect_values(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else EXPECT_NEAR(got[i], expected[i], tol) << "at " << i;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Activations

TEST(ImplPointwise, ResultDtypesAndDtypeErrors) {
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
TEST(ImplPointwise, Int32PromotesAndNamesItselfAsLibTorchDoes) {
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
TEST(ImplPointwise, SixteenBitFloatsRoundPromoteAndRaiseAsLibTorchDoes) {
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

TEST(ImplPointwise, Values) {
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
TEST(ImplPointwise, AScalarOperandIsTheWrappedNumberCastToTheComputeType) {
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

// Integral sums wrap around in int64 as ATen's do: two INT64_MIN make 0, and 2^53 + 1 stays exact (a double
// accumulator gave INT64_MIN and 2^53).
TEST(ImplPointwise, IntegralSumsWrapAndStayExact) {
  Tensor lows = full({2}, Scalar::of_int(std::numeric_limits<std::int64_t>::min()), ScalarType::Int64);
  EXPECT_EQ(sum(lows).to_vector(), (std::vector<double>{0}));
  Tensor big = full({1}, Scalar::of_int(std::int64_t{1} << 53), ScalarType::Int64);
  Tensor one = ones({1}, ScalarType::Int64);
  Tensor s = sum(add(big, one));
  EXPECT_EQ(s.data<std::int64_t>()[0], (std::int64_t{1} << 53) + 1);
  EXPECT_EQ(sum(ones({3}, ScalarType::Bool)).to_vector(), (std::vector<double>{3}));
}

TEST(ImplPointwise, OutputKeepsTheInputsStrideOrder) {
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

TEST(ImplPointwise, ClampPromotesWithItsBoundsAndChecksThem) {
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

TEST(ImplPointwise, ClampValuesWithCrossedAndNaNBounds) {
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

TEST(ImplPointwise, GradFnsAndGradients) {
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

// log is float32 std::log elementwise (integers computed as float32); its gradient grad / self reads the input.
TEST(ImplPointwise, LogValuesDtypesAndGradient) {
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
TEST(ImplPointwise, SqrtValuesDtypesAndGradient) {
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

TEST(ImplPointwise, SavedResultOrSelfDecidesWhichWritesBreakBackward) {
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

TEST(ImplPointwise, InPlaceOnNonLeafRecordsTheSameNodes) {
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

TEST(ImplPointwise, InPlaceChecksComeInLibTorchsOrder) {
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

TEST(ImplPointwise, InPlaceOnAViewOfANonLeafGoesThroughCopySlices) {
  Tensor x = leaf({-1, 0, 1, 2});
  Tensor y = mul(x, Scalar::of(1));
  sigmoid_(slice(y, 0, 1, 3, 1));
  EXPECT_EQ(grad_fn(y)->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(y.version(), 1u);
  backward(sum(y));
  expect_values(grad(x), {1, 0.25, 0.196612, 1});
}

// ---------------------------------------------------------------------------------------------------------
// mm

// masked_fill: the value where the mask holds (converted to self's dtype as fill_ converts it), a contiguous
// result of the broadcast shape out of place; the gradient zeroes what was filled and sums down to self's
// shape; the mask is saved and a non-bool mask is refused (LibTorch 2.x's check).
TEST(ImplPointwise, MaskedFillValuesGradientAndChecks) {
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
TEST(ImplPointwise, AddcmulValuesGradientsAndChecks) {
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

// aten::index with an int64 index (dim 0) and a bool mask (the dims it covers): values, TensorIterator's layout
// of the result, IndexBackward0 (accumulating duplicates, its gradient at version 1, the index saved), errors.
TEST(ImplIndexing, IndexValuesLayoutGradientAndErrors) {
  Tensor x = requires_grad_(clone(seq({3, 2})), true);
  const Tensor idx = from_values({2, 0, 2}, ScalarType::Int64);
  Tensor r = index(x, idx);
  EXPECT_EQ(r.sizes(), (Dims{3, 2}));
  const auto xs = x.to_vector();
  EXPECT_EQ(r.to_vector(), (std::vector<double>{xs[4], xs[5], xs[0], xs[1], xs[4], xs[5]}));
  EXPECT_EQ(grad_fn(r)->name(), "IndexBackward0");
  backward(sum(r));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{1, 1, 0, 0, 2, 2}));
  EXPECT_EQ(grad(x).version(), 1);
  // The result follows the operands' stride order, as TensorIterator lays it out.
  Tensor p = permute(view(clone(seq({12})), {3, 2, 2}), {1, 2, 0});
  EXPECT_EQ(index(p, from_values({1, 0}, ScalarType::Int64)).strides(), (Dims{6, 1, 2}));
  const Tensor mask = from_values({1, 0, 1}, ScalarType::Bool);
  EXPECT_EQ(index(x, mask).to_vector(), (std::vector<double>{xs[0], xs[1], xs[4], xs[5]}));
  EXPECT_EQ(index(x, from_values({-3}, ScalarType::Int64)).to_vector(), (std::vector<double>{xs[0], xs[1]}));

  expect_error([&] { index(x, from_values({3}, ScalarType::Int64)); }, ErrorKind::IndexRange,
               "index 3 is out of bounds for dimension 0 with size 3");
  expect_error([&] { index(x, values({0})); }, ErrorKind::DType,
               "tensors used as indices must be long, byte or bool tensors");
  expect_error([&] { index(x, from_values({1, 0}, ScalarType::Bool)); }, ErrorKind::Shape,
               "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 2] at index 0");
  expect_error([&] { index(full({}, Scalar::of(1), ScalarType::Float32), idx); }, ErrorKind::IndexRange,
               "too many indices for tensor of dimension 0 (got 1)");
  expect_error([&] { index(zeros({0, 2}, ScalarType::Float32), from_values({0}, ScalarType::Int64)); },
               ErrorKind::IndexRange, "index is out of bounds for dimension with size 0");

  Tensor i2 = clone(idx);
  Tensor w = index(requires_grad_(clone(seq({3})), true), i2);
  add_(i2, Scalar::of_int(0));
  EXPECT_EQ(testing::error_of([&] { backward(sum(w)); }).first, ErrorKind::VersionMismatch);
}

// aten::index_put_: writes (last duplicate wins) or accumulates, one version bump, IndexPutBackward0; a mask with
// one value goes through masked_fill_ (no dtype check); an out-of-range index raises after the elements before it
// were written, and bumps nothing.
TEST(ImplIndexing, IndexPutWritesAccumulatesAndChecks) {
  const Tensor idx = from_values({1, 1}, ScalarType::Int64);
  Tensor a = zeros({3}, ScalarType::Float32);
  EXPECT_TRUE(index_put_(a, idx, values({2, 3}), false).is_same(a));
  EXPECT_EQ(a.to_vector(), (std::vector<double>{0, 3, 0}));
  EXPECT_EQ(a.version(), 1);
  index_put_(a, idx, values({2, 3}), true);
  EXPECT_EQ(a.to_vector(), (std::vector<double>{0, 8, 0}));
  index_put_(a, from_values({1, 0, 1}, ScalarType::Bool), from_values({7}, ScalarType::Int64), false);
  EXPECT_EQ(a.to_vector(), (std::vector<double>{7, 8, 7}));
  expect_error([&] { index_put_(a, idx, from_values({1, 1}, ScalarType::Int64), false); }, ErrorKind::DType,
               "Index put requires the source and destination dtypes match, got Float for the destination and Long for "
               "the source.");
  expect_error([&] { index_put_(a, idx, values({1, 2, 3}), false); }, ErrorKind::Shape,
               "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2]");
  expect_error([&] { index_put_(a, idx, a, false); }, ErrorKind::Overlap,
               "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
               "memory location. Please clone() the tensor before performing the operation.");
  Tensor b = zeros({3}, ScalarType::Float32);
  expect_error([&] { index_put_(b, from_values({0, 5, 1}, ScalarType::Int64), values({9, 9, 9}), false); },
               ErrorKind::IndexRange, "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(b.to_vector(), (std::vector<double>{9, 0, 0}));
  EXPECT_EQ(b.version(), 0);

  Tensor x = leaf({1, 1, 1});
  Tensor v = leaf({2, 3});
  Tensor y = clone(x);
  index_put_(y, from_values({0, 2}, ScalarType::Int64), v, false);
  EXPECT_EQ(grad_fn(y)->name(), "IndexPutBackward0");
  backward(sum(mul(y, values({1, 2, 3}))));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{0, 2, 0}));
  EXPECT_EQ(grad(v).to_vector(), (std::vector<double>{1, 3}));

  // One value through a [1, 1] mask: the values' gradient (grad.index(mask), shape [1]) does not fit [1, 1]. The
  // engine refuses it before freeing the node, so a second backward raises the same error, not graph_freed.
  Tensor s = zeros({1, 1}, ScalarType::Float32);
  index_put_(s, full({1, 1}, Scalar::of(1), ScalarType::Bool), requires_grad_(zeros({1, 1}, ScalarType::Float32), true), false);
  const std::string refused = "Function IndexPutBackward0 returned an invalid gradient at index 1 - got [1] but expected shape compatible with [1, 1]";
  expect_error([&] { backward(sum(s)); }, ErrorKind::Shape, refused);
  expect_error([&] { backward(sum(s)); }, ErrorKind::Shape, refused);
}

TEST(ImplLinalg, MmValuesLayoutAndDtype) {
  Tensor a = view(values({1, 2, 3, 4, 5, 6}), {2, 3});
  Tensor b = view(values({1, 2, 3, 4, 5, 6}), {3, 2});
  Tensor c = mm(a, b);
  EXPECT_EQ(c.sizes(), (Dims{2, 2}));
  EXPECT_EQ(c.strides(), (Dims{2, 1}));
  EXPECT_EQ(c.to_vector(), (std::vector<double>{22, 28, 49, 64}));
  // Transposed and expanded operands still give a contiguous result.
  Tensor ct = mm(transpose(b, 0, 1), transpose(a, 0, 1));
  EXPECT_EQ(ct.strides(), (Dims{2, 1}));
  EXPECT_EQ(ct.to_vector(), (std::vector<double>{22, 49, 28, 64}));
  Tensor ce = mm(expand(view(values({1, 2, 3}), {1, 3}), {4, 3}), expand(view(values({1, 1, 1}), {3, 1}), {3, 5}));
  EXPECT_EQ(ce.to_vector(), std::vector<double>(20, 6));
  Tensor i = view(arange(6, ScalarType::Int64), {2, 3});
  Tensor ci = mm(i, transpose(i, 0, 1));
  EXPECT_EQ(ci.dtype(), ScalarType::Int64);
  EXPECT_EQ(ci.to_vector(), (std::vector<double>{5, 14, 14, 50}));
}

TEST(ImplLinalg, MmErrors) {
  Tensor m43 = seq({4, 3});
  expect_error([&] { mm(seq({3}), seq({3, 2})); }, ErrorKind::Shape, "self must be a matrix");
  expect_error([&] { mm(seq({2, 3}), seq({3})); }, ErrorKind::Shape, "mat2 must be a matrix");
  expect_error([&] { mm(m43, m43); }, ErrorKind::Shape, "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x3)");
  Tensor i43 = view(arange(12, ScalarType::Int64), {4, 3});
  EXPECT_EQ(testing::error_of([&] { mm(i43, m43); }).first, ErrorKind::Shape);  // shapes before dtypes
  expect_error([&] { mm(i43, seq({3, 3})); }, ErrorKind::DType, "expected scalar type Long but found Float");
  expect_error([&] { mm(m43, view(arange(9, ScalarType::Int64), {3, 3})); }, ErrorKind::DType,
               "expected scalar type Float but found Long");
  expect_error([&] { mm(bools({4, 3}), bools({3, 3})); }, ErrorKind::DType,
               "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  expect_error([&] { mm(m43, bools({3, 3})); }, ErrorKind::DType, "expected scalar type Float but found Bool");
  // Empty products run no kernel, so no dtype is checked.
  EXPECT_EQ(mm(bools({0, 3}), bools({3, 3})).sizes(), (Dims{0, 3}));
  Tensor z = mm(zeros({2, 0}, ScalarType::Int64), zeros({0, 3}, ScalarType::Float32));
  EXPECT_EQ(z.dtype(), ScalarType::Int64);
  EXPECT_EQ(z.to_vector(), std::vector<double>(6, 0));
}

TEST(ImplLinalg, MmGradientsAndEmptyOperands) {
  Tensor a = seq({2, 3}, true), b = seq({3, 2}, true);
  Tensor c = mm(a, b);
  EXPECT_EQ(graph(c), "MmBackward0(Acc,Acc)");
  backward(sum(c));
  // d/da sum(a @ b) = ones @ b^T: row sums of b; d/db = a^T @ ones: column sums of a.
  expect_values(grad(a), {-1.5, 0.5, 2.5, -1.5, 0.5, 2.5});
  expect_values(grad(b), {-0.5, -0.5, 0.5, 0.5, 1.5, 1.5});
  // A column-major operand (a transposed leaf) gets the same gradient values.
  Tensor at = seq({3, 2}, true);
  backward(sum(mm(transpose(at, 0, 1), b)));
  expect_values(grad(at), {-1.5, -1.5, 0.5, 0.5, 2.5, 2.5});
  Tensor e1 = seq({0, 3}, true), e2 = seq({3, 2}, true);
  Tensor e = mm(e1, e2);
  EXPECT_EQ(e.sizes(), (Dims{0, 2}));
  EXPECT_EQ(e.strides(), (Dims{2, 1}));
  backward(sum(e));
  EXPECT_EQ(grad(e2).to_vector(), std::vector<double>(6, 0));
}

TEST(ImplLinalg, MmSavesEachOperandOnlyWhenTheOtherNeedsGrad) {
  Tensor x = leaf({1, 2, 3, 4});
  {
    Tensor a = view(mul(x, Scalar::of(1)), {2, 2}), b = seq({2, 2});
    Tensor s = sum(mm(a, b));
    mul_(a, Scalar::of(2));  // a is not saved: b needs no grad
    EXPECT_NO_THROW(backward(s));
  }
  {
    Tensor a = view(mul(x, Scalar::of(1)), {2, 2}), b = seq({2, 2});
    Tensor s = sum(mm(a, b));
    mul_(b, Scalar::of(2));
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
  {
    Tensor a = seq({2, 2}), b = view(mul(x, Scalar::of(1)), {2, 2});
    Tensor s = sum(mm(a, b));
    mul_(b, Scalar::of(2));  // b is not saved: a needs no grad
    EXPECT_NO_THROW(backward(s));
  }
  {
    Tensor a = view(mul(x, Scalar::of(1)), {2, 2}), b = seq({2, 2}, true);
    Tensor s = sum(mm(a, b));
    mul_(a, Scalar::of(2));
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
}

// ---------------------------------------------------------------------------------------------------------
// matmul

TEST(ImplLinalg, MatmulComposesTheGraphOfLibTorch113) {
  auto g = [](const Tensor& a, const Tensor& b) { return graph(matmul(a, b)); };
  auto S = [](const Dims& d) { return seq(d, true); };
  EXPECT_EQ(g(S({4}), S({4})), "DotBackward0(Acc,Acc)");
  EXPECT_EQ(g(S({3, 4}), S({4})), "MvBackward0(Acc,Acc)");
  EXPECT_EQ(g(S({4}), S({4, 3})), "SqueezeBackward3(MmBackward0(UnsqueezeBackward0(Acc),Acc))");
  EXPECT_EQ(g(S({3, 4}), S({4, 5})), "MmBackward0(Acc,Acc)");
  EXPECT_EQ(g(S({2, 3, 4}), S({4})), "UnsafeViewBackward0(MvBackward0(ReshapeAliasBackward0(Acc),Acc))");
  EXPECT_EQ(g(S({2, 2, 3, 4}), S({4})), "UnsafeViewBackward0(MvBackward0(ReshapeAliasBackward0(Acc),Acc))");
  EXPECT_EQ(g(S({4}), S({2, 4, 3})),
            "UnsafeViewBackward0(MvBackward0(UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc))),Acc))");
  EXPECT_EQ(g(S({2, 3, 4}), S({4, 5})), "UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0(Acc),Acc))");
  EXPECT_EQ(g(S({3, 4}), S({2, 4, 5})),
            "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0("
            "TransposeBackward0(Acc))),TBackward0(Acc)))))");
  EXPECT_EQ(g(S({2, 3, 4}), S({2, 4, 5})),
            "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0(Acc)),ReshapeAliasBackward0("
            "ExpandBackward0(Acc))))");
  EXPECT_EQ(g(S({2, 1, 3, 4}), S({5, 4, 5})),
            "UnsafeViewBackward0(BmmBackward0(UnsafeViewBackward0(CloneBackward0(ExpandBackward0(Acc))),"
            "UnsafeViewBackward0(CloneBackward0(ExpandBackward0(Acc)))))");
  // Stride-dependent folding: a batch of transposed matrices goes to bmm, a transposed batch folds by copying.
  EXPECT_EQ(g(permute(S({2, 4, 3}), {0, 2, 1}), S({4, 5})),
            "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0(PermuteBackward0(Acc))),"
            "ReshapeAliasBackward0(ExpandBackward0(Acc))))");
  EXPECT_EQ(g(transpose(S({3, 2, 4}), 0, 1), S({4, 5})),
            "UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0(TransposeBackward0(Acc))),Acc))");
  EXPECT_EQ(g(S({3, 4}), permute(S({2, 5, 4}), {0, 2, 1})),
            "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0(Acc)),ReshapeAliasBackward0("
            "ExpandBackward0(PermuteBackward0(Acc)))))");
  EXPECT_EQ(g(S({4}), permute(S({2, 5, 4}), {0, 2, 1})),
            "UnsafeViewBackward0(MvBackward0(ReshapeAliasBackward0(TransposeBackward0(PermuteBackward0(Acc))),Acc))");
  EXPECT_EQ(g(S({3, 4}), transpose(S({4, 2, 5}), 0, 1)),
            "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0("
            "TransposeBackward0(TransposeBackward0(Acc))),TBackward0(Acc)))))");
  // Only a 3-d batch is kept from folding by its strides.
  EXPECT_EQ(g(permute(S({2, 2, 4, 3}), {0, 1, 3, 2}), S({4, 5})),
            "UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0(PermuteBackward0(Acc))),Acc))");
  EXPECT_EQ(g(permute(S({4, 3, 2}), {2, 0, 1}), S({3, 5})),
            "UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0(PermuteBackward0(Acc))),Acc))");
  EXPECT_EQ(g(S({5, 4}), permute(S({2, 2, 3, 4}), {0, 1, 3, 2})),
            "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0("
            "TransposeBackward0(PermuteBackward0(Acc))),TBackward0(Acc)))))");
  EXPECT_EQ(g(S({2, 0, 4}), S({4, 5})), "UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0(Acc),Acc))");
  EXPECT_EQ(g(transpose(S({3, 2, 0}), 0, 1), S({0, 5})),
            "UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0(TransposeBackward0(Acc)),Acc))");
  EXPECT_EQ(g(expand(S({1, 3, 4}), {2, 3, 4}), S({2, 4, 2})),
            "UnsafeViewBackward0(BmmBackward0(ReshapeAliasBackward0(ExpandBackward0(ExpandBackward0(Acc))),"
            "ReshapeAliasBackward0(ExpandBackward0(Acc))))");
  // With one result column the transposed result is already contiguous: a view is returned, not a copy.
  Tensor one_col = matmul(S({3, 4}), S({2, 4, 1}));
  EXPECT_EQ(graph(one_col),
            "TransposeBackward0(UnsafeViewBackward0(MmBackward0(ReshapeAliasBackward0(TransposeBackward0(Acc)),"
            "TBackward0(Acc))))");
  EXPECT_EQ(one_col.strides(), (Dims{3, 1, 3}));
  EXPECT_TRUE(autograd::is_view(one_col));
  // Folding does not depend on which operand requires grad.
  EXPECT_EQ(g(seq({3, 4}), S({2, 4, 5})),
            "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(UnsafeViewBackward0(CloneBackward0("
            "TransposeBackward0(Acc))),_))))");
  EXPECT_EQ(g(S({3, 4}), seq({2, 4, 5})),
            "CloneBackward0(TransposeBackward0(UnsafeViewBackward0(MmBackward0(_,TBackward0(Acc)))))");
  EXPECT_EQ(g(S({2, 3, 4}), seq({4})), "UnsafeViewBackward0(MvBackward0(ReshapeAliasBackward0(Acc),_))");
  EXPECT_EQ(g(seq({4}), S({4, 3})), "SqueezeBackward3(MmBackward0(_,Acc))");
}

TEST(ImplLinalg, MatmulShapesStridesAndVersions) {
  struct Case {
    Dims a, b, out, strides;
  };
  const std::vector<Case> cases = {
      {{4}, {4}, {}, {}},
      {{3, 4}, {4}, {3}, {1}},
      {{4}, {4, 3}, {3}, {1}},
      {{2, 3, 4}, {4}, {2, 3}, {3, 1}},
      {{4}, {2, 4, 3}, {2, 3}, {3, 1}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}, {15, 5, 1}},
      {{3, 4}, {2, 4, 5}, {2, 3, 5}, {15, 5, 1}},
      {{3, 4}, {2, 2, 4, 5}, {2, 2, 3, 5}, {30, 15, 5, 1}},
      {{2, 1, 3, 4}, {5, 4, 5}, {2, 5, 3, 5}, {75, 15, 5, 1}},
      {{2, 0, 4}, {4, 5}, {2, 0, 5}, {5, 5, 1}},
      {{2, 3, 0}, {0, 5}, {2, 3, 5}, {15, 5, 1}},
      {{0, 3, 4}, {0, 4, 6}, {0, 3, 6}, {18, 6, 1}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(format_dims(c.a) + " @ " + format_dims(c.b));
    Tensor r = matmul(seq(c.a), seq(c.b));
    EXPECT_EQ(r.sizes(), c.out);
    EXPECT_EQ(r.strides(), c.strides);
    // Only the vector @ matrix path writes its result in place (squeeze_), with or without grad.
    EXPECT_EQ(r.version(), c.a.size() == 1 && c.b.size() == 2 ? 1u : 0u);
  }
  // Empty inner dimensions give zeros.
  EXPECT_EQ(matmul(seq({2, 3, 0}), seq({2, 0, 2})).to_vector(), std::vector<double>(12, 0));
  EXPECT_EQ(matmul(seq({0}), seq({0})).to_vector(), std::vector<double>{0});
}

TEST(ImplLinalg, MatmulValuesMatchMmPerBatch) {
  Tensor v = values({1, 2, 3});
  Tensor m = view(values({1, 2, 3, 4, 5, 6}), {3, 2});
  EXPECT_EQ(matmul(v, m).to_vector(), (std::vector<double>{22, 28}));
  EXPECT_EQ(matmul(transpose(m, 0, 1), v).to_vector(), (std::vector<double>{22, 28}));
  EXPECT_EQ(matmul(v, v).to_vector(), std::vector<double>{14});
  auto expect_same = [](const Tensor& got, const Tensor& want) { expect_values(got, want.to_vector(), 1e-5); };
  Tensor a = seq({2, 3, 4}), b = seq({2, 4, 5}), w = seq({4, 5}), x = seq({3, 4}), u = seq({4});
  for (std::int64_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    expect_same(select(matmul(a, b), 0, i), mm(select(a, 0, i), select(b, 0, i)));
    expect_same(select(matmul(a, w), 0, i), mm(select(a, 0, i), w));
    expect_same(select(matmul(x, b), 0, i), mm(x, select(b, 0, i)));
    expect_same(select(matmul(a, u), 0, i), matmul(select(a, 0, i), u));
    expect_same(select(matmul(u, b), 0, i), matmul(u, select(b, 0, i)));
    Tensor ap = permute(seq({2, 4, 3}), {0, 2, 1});
    expect_same(select(matmul(ap, w), 0, i), mm(select(ap, 0, i), w));
  }
  Tensor a4 = seq({2, 1, 3, 4}), b3 = seq({5, 4, 2});
  Tensor r = matmul(a4, b3);
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 5; ++j)
      expect_same(select(select(r, 0, i), 0, j), mm(select(select(a4, 0, i), 0, 0), select(b3, 0, j)));
  Tensor li = view(arange(8, ScalarType::Int64), {2, 2, 2});
  EXPECT_EQ(matmul(li, li).to_vector(), (std::vector<double>{2, 3, 6, 11, 46, 55, 66, 79}));
}

TEST(ImplLinalg, MatmulGradients) {
  // d/dx sum(x @ b) for x (3, 4) and b (2, 4, 5): every row of x gets the row sums of b summed over the batch.
  Tensor x = seq({3, 4}, true), b = seq({2, 4, 5}, true);
  backward(sum(matmul(x, b)));
  Tensor want = sum(sum(b, {0}, false), {1}, false);
  for (std::int64_t r = 0; r < 3; ++r) expect_values(select(grad(x), 0, r), want.to_vector(), 1e-5);
  // d/db: x's column sums, in each batch and column.
  Tensor col = sum(x, {0}, false);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < 5; ++c) expect_values(select(select(grad(b), 0, n), 1, c), col.to_vector(), 1e-5);
  // Broadcast batches reduce back to the operand's shape.
  Tensor p = seq({2, 1, 3, 4}, true), q = seq({5, 4, 2}, true);
  backward(sum(matmul(p, q)));
  EXPECT_EQ(grad(p).sizes(), (Dims{2, 1, 3, 4}));
  EXPECT_EQ(grad(q).sizes(), (Dims{5, 4, 2}));
  Tensor qsum = sum(sum(q, {0}, false), {1}, false);  // per row of a q matrix, over batch and columns
  expect_values(select(select(select(grad(p), 0, 1), 0, 0), 0, 2), qsum.to_vector(), 1e-5);
  Tensor v = leaf({1, 2, 3}), m = requires_grad_(clone(view(values({1, 2, 3, 4, 5, 6}), {3, 2})), true);
  backward(sum(matmul(v, m)));
  EXPECT_EQ(grad(v).to_vector(), (std::vector<double>{3, 7, 11}));
  EXPECT_EQ(grad(m).to_vector(), (std::vector<double>{1, 1, 2, 2, 3, 3}));
  Tensor d1 = leaf({1, 2, 3}), d2 = leaf({4, 5, 6});
  Tensor d = matmul(d1, d2);
  EXPECT_EQ(d.dim(), 0);
  backward(d);
  EXPECT_EQ(grad(d1).to_vector(), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(grad(d2).to_vector(), (std::vector<double>{1, 2, 3}));
}

TEST(ImplLinalg, MatmulSavedOperands) {
  {
    // vector @ matrix saves the unsqueezed vector, which shares the vector's version counter.
    Tensor a = seq({3}), b = seq({3, 2}, true);
    Tensor s = sum(matmul(a, b));
    mul_(a, Scalar::of(2));
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
  {
    Tensor x = leaf({1, 2, 3});
    Tensor a = mul(x, Scalar::of(1)), b = seq({3});
    Tensor d = matmul(a, b);
    mul_(a, Scalar::of(2));  // dot saves a only for b's gradient
    EXPECT_NO_THROW(backward(d));
  }
  for (auto vec_grad : {false, true}) {
    Tensor m = seq({2, 3}, !vec_grad), v = seq({3}, vec_grad);
    Tensor s = sum(matmul(m, v));
    mul_(vec_grad ? m : v, Scalar::of(2));  // the operand the other's gradient reads
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
  {
    Tensor a = seq({2, 2, 3}), b = seq({2, 3, 2}, true);
    Tensor s = sum(matmul(a, b));
    mul_(a, Scalar::of(2));  // bmm saves the reshaped view of a
    EXPECT_EQ(testing::error_of([&] { backward(s); }).first, ErrorKind::VersionMismatch);
  }
}

TEST(ImplLinalg, AVersionErrorNamesTheOperandItsNodeUnpacksFirst) {
  // Both operands stale; each is rewritten by the op that made it, so its grad_fn's name stays the same.
  auto stale_message = [](const Dims& da, const Dims& db) {
    Tensor a = mul(seq(da, true), Scalar::of(1)), b = add(seq(db, true), Scalar::of(1));
    Tensor s = sum(matmul(a, b));
    mul_(a, Scalar::of(2));
    add_(b, Scalar::of(1));
    auto [kind, message] = error_of([&] { backward(s); });
    EXPECT_EQ(kind, ErrorKind::VersionMismatch);
    return message;
  };
  std::string mm_msg = stale_message({2, 3}, {3, 2});
  EXPECT_NE(mm_msg.find("[2, 3]], which is output 0 of MulBackward1"), std::string::npos) << mm_msg;  // self
  std::string bmm_msg = stale_message({2, 2, 3}, {2, 3, 2});
  EXPECT_NE(bmm_msg.find("[2, 2, 3]]"), std::string::npos) << bmm_msg;  // self (as reshaped by matmul)
  std::string mv_msg = stale_message({2, 3}, {3});
  EXPECT_NE(mv_msg.find("[3]], which is output 0 of AddBackward1"), std::string::npos) << mv_msg;  // vec
  std::string dot_msg = stale_message({3}, {3});
  EXPECT_NE(dot_msg.find("[3]], which is output 0 of AddBackward1"), std::string::npos) << dot_msg;  // tensor
}

TEST(ImplLinalg, MatmulErrors) {
  expect_error([] { matmul(view(seq({1}), {}), seq({3})); }, ErrorKind::Shape,
               "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  expect_error([] { matmul(seq({3}), seq({4})); }, ErrorKind::Shape,
               "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but "
               "got 3 and 4 elements respectively");
  expect_error([] { matmul(seq({2, 3}), seq({4})); }, ErrorKind::Shape, "size mismatch, got 2, 2x3,4");
  expect_error([] { matmul(seq({3}), seq({4, 6})); }, ErrorKind::Shape,
               "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x6)");
  expect_error([] { matmul(seq({2, 3, 4}), seq({5, 6})); }, ErrorKind::Shape,
               "mat1 and mat2 shapes cannot be multiplied (6x4 and 5x6)");
  expect_error([] { matmul(seq({2, 3, 4}), seq({5})); }, ErrorKind::Shape, "size mismatch, got 6, 6x4,5");
  expect_error([] { matmul(seq({5, 6}), seq({2, 3, 4})); }, ErrorKind::Shape,
               "mat1 and mat2 shapes cannot be multiplied (8x3 and 6x5)");
  expect_error([] { matmul(seq({2, 3, 4}), seq({2, 5, 6})); }, ErrorKind::Shape,
               "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].");
  expect_error([] { matmul(seq({2, 3, 4}), seq({3, 4, 6})); }, ErrorKind::Shape,
               "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  Tensor i = view(arange(24, ScalarType::Int64), {2, 3, 4});
  Tensor bool3 = bools({3});
  expect_error([&] { matmul(bool3, bool3); }, ErrorKind::DType, "\"dot\" not implemented for 'Bool'");
  expect_error([&] { matmul(bools({0}), bools({0})); }, ErrorKind::DType, "\"dot\" not implemented for 'Bool'");
  expect_error([&] { matmul(arange(3, ScalarType::Int64), seq({3})); }, ErrorKind::DType,
               "dot : expected both vectors to have same dtype, but found Long and Float");
  expect_error([&] { matmul(bools({2, 3}), bool3); }, ErrorKind::DType,
               "\"addmv_impl_cpu\" not implemented for 'Bool'");
  expect_error([&] { matmul(seq({2, 3}), bool3); }, ErrorKind::DType, "expected scalar type Float but found Bool");
  expect_error([&] { matmul(i, seq({4})); }, ErrorKind::DType, "expected scalar type Long but found Float");
  expect_error([&] { matmul(arange(4, ScalarType::Int64), seq({2, 4, 3})); }, ErrorKind::DType,
               "expected scalar type Float but found Long");
  // bmm loops itself below 400 multiply-adds per batch (dispatching on the first operand) and calls addmm per
  // batch above (dispatching on the result, which has the second operand's dtype).
  expect_error([&] { matmul(i, seq({2, 4, 6})); }, ErrorKind::DType, "expected scalar type Long but found Float");
  expect_error([&] { matmul(seq({2, 3, 4}), view(arange(48, ScalarType::Int64), {2, 4, 6})); }, ErrorKind::DType,
               "expected scalar type Float but found Long");
  Tensor big_i = view(arange(200, ScalarType::Int64), {2, 10, 10});
  expect_error([&] { matmul(big_i, seq({2, 10, 10})); }, ErrorKind::DType,
               "expected scalar type Float but found Long");
  expect_error([&] { matmul(bools({1, 3, 7}), bools({1, 7, 19})); }, ErrorKind::DType,
               "\"bmm\" not implemented for 'Bool'");
  expect_error([&] { matmul(bools({1, 4, 10}), bools({1, 10, 10})); }, ErrorKind::DType,
               "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  EXPECT_EQ(matmul(bools({2, 3, 0}), bools({2, 0, 2})).sizes(), (Dims{2, 3, 2}));
}

TEST(ImplLinalg, NoGradModeRecordsNothingButStillBumpsTheSqueezedVersion) {
  Tensor a = seq({4}, true), b = seq({4, 3}, true);
  autograd::NoGradGuard no_grad;
  Tensor r = matmul(a, b);
  EXPECT_FALSE(grad_fn(r));
  EXPECT_EQ(r.version(), 1u);
  EXPECT_FALSE(grad_fn(matmul(seq({3, 4}, true), seq({2, 4, 5}, true))));
}

// out= (at::add_out(out, a, b)): an out of another shape is resized in place (the same storage, grown, every
// tensor over it seeing it), laid out as a fresh result; its version moves once; it is returned.
TEST(OutVariants, AnOutOfAnotherShapeIsResizedOverItsOwnStorage) {
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
TEST(OutVariants, StridesDtypeAndReadWriteOuts) {
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
TEST(OutVariants, RefuseTensorsRequiringGradWhileGradModeIsOn) {
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

}  // namespace
}  // namespace parity::impl
