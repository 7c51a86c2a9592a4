// The LibTorch backend checked through the Backend interface only: hand-built programs whose outcome is
// LibTorch's documented (and here observed) behaviour. If one of these fails after a LibTorch upgrade, the
// oracle changed: find out how before touching impl.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/content.h"
#include "program/program_builder.h"
#include "tests/support/torch_trace.h"

namespace parity::oracle {
namespace {

using program::Attrs;
using program::DType;
using judge::ErrorCategory;
using program::MemoryFormat;
using program::OpId;
using program::Scalar;
using program::Step;
using judge::StepObs;
using judge::Trace;
using judge::TensorObs;
using testing::Builder;
using testing::obs;
using testing::result;

Scalar int_scalar(double v) { return {Scalar::Kind::Int, v}; }
Scalar float_scalar(double v) { return {Scalar::Kind::Float, v}; }

std::vector<double> scaled(const std::vector<double>& v, double k, double plus = 0.0) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * k + plus);
  return out;
}

TEST(OracleBackend, NameAndVersion) {
  auto backend = make_torch_backend();
  EXPECT_EQ(backend->name(), "libtorch");
  EXPECT_EQ(backend->version(), torch_version());
  ASSERT_FALSE(torch_version().empty());
  EXPECT_TRUE(torch_version()[0] >= '1' && torch_version()[0] <= '9') << torch_version();
}

TEST(OracleBackend, RandIsSeededContentThroughStrides) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, false, 7);
  int t = b.rand_strided({3, 2}, {1, 3}, 0, DType::Float64, false, 7);  // transposed walk of the same data
  int o = b.rand_strided({2}, {2}, 3, DType::Int64, false, 9);
  Trace tr = b.run();
  EXPECT_EQ(tr.backend, "libtorch");
  auto data = program::seeded_content(7, 6, DType::Float32);
  const auto& ox = result(tr, x);
  EXPECT_EQ(ox.values, data);
  EXPECT_EQ(ox.sizes, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ox.strides, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(ox.dtype, DType::Float32);
  EXPECT_EQ(ox.device, "cpu");
  EXPECT_TRUE(ox.is_leaf);
  EXPECT_FALSE(ox.requires_grad);
  EXPECT_EQ(ox.grad_fn, "");
  EXPECT_EQ(ox.version, 0);
  EXPECT_TRUE(ox.contiguous);
  EXPECT_EQ(ox.alias_of, x);

  const auto& ot = result(tr, t);
  EXPECT_EQ(ot.values, (std::vector<double>{data[0], data[3], data[1], data[4], data[2], data[5]}));
  EXPECT_EQ(ot.strides, (std::vector<std::int64_t>{1, 3}));
  EXPECT_FALSE(ot.contiguous);
  EXPECT_TRUE(ot.non_overlapping_dense);
  EXPECT_EQ(ot.alias_of, t);  // seeded the same, but its own storage

  auto idata = program::seeded_content(9, 6, DType::Int64);  // extent: offset 3 + (2-1)*2 + 1
  const auto& oo = result(tr, o);
  EXPECT_EQ(oo.offset, 3);
  EXPECT_EQ(oo.dtype, DType::Int64);
  EXPECT_EQ(oo.values, (std::vector<double>{idata[3], idata[5]}));
}

TEST(OracleBackend, RandWithChannelsLastStridesIsChannelsLast) {
  Builder b;
  int x = b.rand_strided({2, 3, 4, 5}, {60, 1, 15, 3}, 0);
  int kept = b.with_format(OpId::Clone, x, MemoryFormat::Preserve);
  int dense = b.with_format(OpId::Contiguous, x, MemoryFormat::Contiguous);
  int same = b.with_format(OpId::Contiguous, x, MemoryFormat::ChannelsLast);
  int dense_preserve = b.with_format(OpId::Contiguous, dense, MemoryFormat::Preserve);
  int x3 = b.rand_strided({2, 3, 2, 2, 2}, {24, 1, 12, 6, 3}, 0);
  Trace tr = b.run();

  const auto& ox = result(tr, x);
  EXPECT_TRUE(ox.channels_last);
  EXPECT_FALSE(ox.contiguous);
  EXPECT_FALSE(ox.channels_last_3d);
  EXPECT_TRUE(ox.non_overlapping_dense);

  const auto& ok = result(tr, kept);  // preserve keeps the exact strides of a dense input
  EXPECT_EQ(ok.strides, (std::vector<std::int64_t>{60, 1, 15, 3}));
  EXPECT_NE(ok.alias_of, x);
  EXPECT_EQ(ok.values, ox.values);

  const auto& od = result(tr, dense);
  EXPECT_EQ(od.strides, (std::vector<std::int64_t>{60, 20, 5, 1}));
  EXPECT_TRUE(od.contiguous);
  EXPECT_FALSE(od.channels_last);
  EXPECT_EQ(od.alias_of, dense);
  EXPECT_EQ(od.values, ox.values);

  EXPECT_EQ(result(tr, same).alias_of, x);  // already in that format: contiguous() returns self
  // contiguous(preserve) only raises when it would have to copy: an already-contiguous input comes back as is.
  EXPECT_EQ(result(tr, dense_preserve).alias_of, dense);

  const auto& o3 = result(tr, x3);
  EXPECT_TRUE(o3.channels_last_3d);
  EXPECT_FALSE(o3.channels_last);
  EXPECT_FALSE(o3.contiguous);
}

TEST(OracleBackend, CloneOwnsItsStorageAndIsDifferentiable) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int c = b.with_format(OpId::Clone, x, MemoryFormat::Preserve);
  Trace tr = b.run();
  const auto& ox = result(tr, x);
  EXPECT_TRUE(ox.requires_grad);
  EXPECT_TRUE(ox.is_leaf);
  const auto& oc = result(tr, c);
  EXPECT_EQ(oc.alias_of, c);
  EXPECT_EQ(oc.grad_fn, "CloneBackward0");
  EXPECT_TRUE(oc.requires_grad);
  EXPECT_FALSE(oc.is_leaf);
  EXPECT_EQ(oc.values, ox.values);
}

TEST(OracleBackend, DetachSharesStorageAndVersionCounter) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int d = b.step(OpId::Detach, {x});
  int w = b.scalar_op(OpId::AddScalar_, d, int_scalar(1));
  Trace tr = b.run();
  const auto& od = result(tr, d);
  EXPECT_EQ(od.alias_of, x);
  EXPECT_FALSE(od.requires_grad);
  EXPECT_TRUE(od.is_leaf);
  EXPECT_EQ(od.grad_fn, "");

  const StepObs& s = tr.steps[w];
  ASSERT_EQ(s.status, StepObs::Status::Ok) << s.message;
  for (int v : {x, d, w}) {
    EXPECT_EQ(obs(s, v).version, 1) << "value " << v;
    EXPECT_EQ(obs(s, v).alias_of, x) << "value " << v;
  }
  EXPECT_EQ(obs(s, x).values, scaled(result(tr, x).values, 1.0, 1.0));
  EXPECT_TRUE(obs(s, x).requires_grad);  // the in-place write went through the detached alias
}

TEST(OracleBackend, InPlaceBumpsTheVersionOfEveryView) {
  Builder b;
  Attrs z;
  z.sizes = {2, 3};
  int x = b.step(OpId::Zeros, {}, z);
  int v = b.with_sizes(OpId::View, x, {6});
  int t = b.with_dims(OpId::Transpose, x, 0, 1);
  int a = b.scalar_op(OpId::AddScalar_, x, int_scalar(2));
  int m = b.scalar_op(OpId::MulScalar_, v, float_scalar(0.5));
  Trace tr = b.run();
  EXPECT_EQ(result(tr, v).alias_of, x);
  EXPECT_EQ(result(tr, t).alias_of, x);
  EXPECT_EQ(result(tr, t).strides, (std::vector<std::int64_t>{1, 3}));
  for (int id : {x, v, t, a}) EXPECT_EQ(obs(tr.steps[a], id).version, 1) << "value " << id;
  for (int id : {x, v, t, a, m}) EXPECT_EQ(obs(tr.steps[m], id).version, 2) << "value " << id;
  EXPECT_EQ(obs(tr.steps[m], x).values, std::vector<double>(6, 1.0));
  EXPECT_EQ(obs(tr.steps[m], m).sizes, (std::vector<std::int64_t>{6}));  // the result is operand 0 itself
}

TEST(OracleBackend, InPlaceOnSavedResultFailsAtBackward) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int e = b.step(OpId::Exp, {x});  // exp saves its result
  Attrs o;
  o.sizes = {2, 3};
  int one = b.step(OpId::Ones, {}, o);
  int w = b.step(OpId::Add_, {e, one});
  int s = b.step(OpId::Sum, {w});
  int bw = b.backward(s);
  Trace tr = b.run();
  EXPECT_EQ(result(tr, e).grad_fn, "ExpBackward0");
  ASSERT_EQ(tr.steps[w].status, StepObs::Status::Ok) << tr.steps[w].message;  // a non-leaf may be written
  EXPECT_EQ(obs(tr.steps[w], e).version, 1);
  EXPECT_EQ(obs(tr.steps[w], e).grad_fn, "AddBackward0");  // history rebased onto the in-place op
  const StepObs& sb = tr.steps[bw];
  EXPECT_EQ(sb.status, StepObs::Status::Error);
  EXPECT_EQ(sb.category, ErrorCategory::VersionMismatch) << sb.message;
  EXPECT_FALSE(obs(sb, x).grad.has_value());
}

TEST(OracleBackend, InPlaceOnLeafRequiringGradRaisesAndDependentsAreSkipped) {
  Builder b;
  int x = b.rand({3}, DType::Float32, true);
  int w = b.scalar_op(OpId::AddScalar_, x, int_scalar(1));
  int n = b.step(OpId::Neg, {w});  // its input never came to exist
  int ok = b.step(OpId::Neg, {x});
  Trace tr = b.run();
  const StepObs& sw = tr.steps[w];
  EXPECT_EQ(sw.status, StepObs::Status::Error);
  EXPECT_EQ(sw.category, ErrorCategory::LeafInPlace) << sw.message;
  EXPECT_EQ(obs(sw, x).version, 0);  // the check runs before the write
  EXPECT_EQ(obs(sw, x).values, result(tr, x).values);
  EXPECT_EQ(tr.steps[n].status, StepObs::Status::Skipped);
  EXPECT_TRUE(tr.steps[n].observed.empty());
  EXPECT_EQ(result(tr, ok).grad_fn, "NegBackward0");
}

TEST(OracleBackend, InPlaceOnLeafUnderNoGradIsAllowed) {
  Builder b;
  int x = b.rand({3}, DType::Float32, true);
  int w = b.scalar_op(OpId::AddScalar_, x, int_scalar(1), /*grad_enabled=*/false);
  Trace tr = b.run();
  const StepObs& s = tr.steps[w];
  ASSERT_EQ(s.status, StepObs::Status::Ok) << s.message;
  EXPECT_EQ(obs(s, x).version, 1);
  EXPECT_TRUE(obs(s, w).is_leaf);
  EXPECT_TRUE(obs(s, w).requires_grad);
  EXPECT_EQ(obs(s, w).grad_fn, "");
  EXPECT_EQ(obs(s, w).alias_of, x);
}

// A view of a tensor that requires grad, made under no_grad, reports requires_grad (it follows its base) yet
// is a leaf with no grad_fn; writing it in place with grad enabled raises even with a plain scalar.
TEST(OracleBackend, ViewMadeUnderNoGradFollowsItsBaseButCannotBeWritten) {
  Builder b;
  int x = b.step(OpId::Neg, {b.rand({2, 3}, DType::Float32, true)});
  Attrs t;
  t.dim = 0;
  t.dim1 = 1;
  int v = b.step(OpId::Transpose, {x}, t, /*grad_enabled=*/false);
  int w = b.scalar_op(OpId::MulScalar_, v, int_scalar(2));
  Trace tr = b.run();
  const auto& ov = result(tr, v);
  EXPECT_EQ(ov.alias_of, x);
  EXPECT_TRUE(ov.requires_grad);
  EXPECT_TRUE(ov.is_leaf);
  EXPECT_EQ(ov.grad_fn, "");
  EXPECT_EQ(tr.steps[w].status, StepObs::Status::Error);
  EXPECT_EQ(tr.steps[w].category, ErrorCategory::ViewInPlace) << tr.steps[w].message;
  EXPECT_EQ(obs(tr.steps[w], x).version, 0);
}

// In place on a view of a non-leaf rebases the base onto CopySlices (whose Node::name() is the demangled C++
// class name, unlike generated nodes) and the view onto AsStridedBackward0; gradients flow through both.
TEST(OracleBackend, InPlaceOnViewOfNonLeafRebasesHistory) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true, 3);
  int y = b.scalar_op(OpId::MulScalar, x, int_scalar(1));
  Attrs sl;
  sl.dim = 1;
  sl.start = 0;
  sl.end = 3;
  sl.step = 2;
  int v = b.step(OpId::Slice, {y}, sl);
  int w = b.scalar_op(OpId::MulScalar_, v, int_scalar(3));
  int s = b.step(OpId::Sum, {y});
  int bw = b.backward(s);
  Trace tr = b.run();
  EXPECT_EQ(result(tr, y).grad_fn, "MulBackward1");  // mul.Scalar: C++ does not wrap the scalar in a tensor
  EXPECT_EQ(result(tr, v).grad_fn, "SliceBackward0");
  const StepObs& sw = tr.steps[w];
  ASSERT_EQ(sw.status, StepObs::Status::Ok) << sw.message;
  EXPECT_EQ(obs(sw, y).grad_fn, "torch::autograd::CopySlices");
  EXPECT_EQ(obs(sw, v).grad_fn, "AsStridedBackward0");
  EXPECT_EQ(obs(sw, y).version, 1);
  EXPECT_EQ(obs(sw, x).version, 0);
  const auto& xs = result(tr, x).values;
  EXPECT_EQ(obs(sw, y).values, (std::vector<double>{3 * xs[0], xs[1], 3 * xs[2], 3 * xs[3], xs[4], 3 * xs[5]}));
  const StepObs& sb = tr.steps[bw];
  ASSERT_EQ(sb.status, StepObs::Status::Ok) << sb.message;
  EXPECT_EQ(obs(sb, x).grad->values, (std::vector<double>{3, 1, 3, 3, 1, 3}));
}

TEST(OracleBackend, BackwardOfNonScalarNeedsAGradient) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int y = b.scalar_op(OpId::MulScalar, x, float_scalar(2.0));
  int bw = b.backward(y);
  Trace tr = b.run();
  EXPECT_EQ(tr.steps[bw].status, StepObs::Status::Error);
  EXPECT_EQ(tr.steps[bw].category, ErrorCategory::NonScalarBackward) << tr.steps[bw].message;
}

TEST(OracleBackend, SecondBackwardThroughMulFindsTheGraphFreed) {
  Builder b;
  int x = b.rand({2, 2}, DType::Float32, true, 3);
  int y = b.rand({2, 2}, DType::Float32, true, 4);
  int m = b.step(OpId::Mul, {x, y});
  int s = b.step(OpId::Sum, {m});
  int b1 = b.backward(s);
  int b2 = b.backward(s);
  Trace tr = b.run();
  const StepObs& first = tr.steps[b1];
  ASSERT_EQ(first.status, StepObs::Status::Ok) << first.message;
  ASSERT_TRUE(obs(first, x).grad.has_value());
  ASSERT_TRUE(obs(first, y).grad.has_value());
  EXPECT_EQ(obs(first, x).grad->values, result(tr, y).values);  // d(sum(x*y))/dx = y
  EXPECT_EQ(obs(first, y).grad->values, result(tr, x).values);
  EXPECT_EQ(obs(first, x).grad->dtype, DType::Float32);
  EXPECT_EQ(obs(first, x).grad->sizes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_FALSE(obs(first, m).grad.has_value());  // non-leaf without retain_grad
  const StepObs& second = tr.steps[b2];
  EXPECT_EQ(second.status, StepObs::Status::Error);
  EXPECT_EQ(second.category, ErrorCategory::GraphFreed) << second.message;
  EXPECT_EQ(obs(second, x).grad->values, result(tr, y).values);  // the failed pass accumulated nothing
}

TEST(OracleBackend, RetainedGraphAccumulatesGrads) {
  Builder b;
  int x = b.rand({3}, DType::Float64, true, 5);
  int p = b.scalar_op(OpId::Pow, x, int_scalar(2));
  int s = b.step(OpId::Sum, {p});
  int b1 = b.backward(s, true);
  int b2 = b.backward(s, false);
  Trace tr = b.run();
  auto xs = result(tr, x).values;
  ASSERT_EQ(tr.steps[b1].status, StepObs::Status::Ok) << tr.steps[b1].message;
  ASSERT_EQ(tr.steps[b2].status, StepObs::Status::Ok) << tr.steps[b2].message;
  EXPECT_EQ(obs(tr.steps[b1], x).grad->values, scaled(xs, 2.0));
  EXPECT_EQ(obs(tr.steps[b2], x).grad->values, scaled(xs, 4.0));
  EXPECT_EQ(obs(tr.steps[b2], x).grad->dtype, DType::Float64);
}

TEST(OracleBackend, NonLeafGradNeedsRetainGradAndReadingItStaysQuiet) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int y = b.scalar_op(OpId::MulScalar, x, float_scalar(2.0));
  int w = b.scalar_op(OpId::MulScalar, x, float_scalar(3.0));
  int rg = b.step(OpId::RetainGrad, {y});
  int a = b.step(OpId::Add, {y, w});
  int s = b.step(OpId::Sum, {a});
  int bw = b.backward(s);
  ::testing::internal::CaptureStderr();
  Trace tr = b.run();
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");  // LibTorch warns on .grad of a non-leaf; the session swallows it
  ASSERT_EQ(tr.steps[rg].status, StepObs::Status::Ok) << tr.steps[rg].message;
  const StepObs& sb = tr.steps[bw];
  ASSERT_EQ(sb.status, StepObs::Status::Ok) << sb.message;
  ASSERT_TRUE(obs(sb, y).grad.has_value());
  EXPECT_EQ(obs(sb, y).grad->values, std::vector<double>(6, 1.0));
  EXPECT_FALSE(obs(sb, w).grad.has_value());
  EXPECT_FALSE(obs(sb, a).grad.has_value());
  ASSERT_TRUE(obs(sb, x).grad.has_value());
  EXPECT_EQ(obs(sb, x).grad->values, std::vector<double>(6, 5.0));
}

// retains_grad() is observed: set by retain_grad on a non-leaf, and kept by detach_(), which makes the tensor a
// leaf (LibTorch 1.13 resets grad_fn, requires_grad and output_nr only).
TEST(OracleBackend, RetainsGradIsObservedAndSurvivesDetachInPlace) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int y = b.scalar_op(OpId::MulScalar, x, float_scalar(2.0));
  int rg = b.step(OpId::RetainGrad, {y});
  int same = b.with_format(OpId::Contiguous, y, MemoryFormat::Contiguous);  // y itself, observed again
  int d = b.step(OpId::Detach_, {y});
  Trace tr = b.run();
  EXPECT_FALSE(result(tr, y).retains_grad);
  ASSERT_EQ(tr.steps[rg].status, StepObs::Status::Ok) << tr.steps[rg].message;
  EXPECT_TRUE(result(tr, same).retains_grad);
  EXPECT_FALSE(result(tr, same).is_leaf);
  EXPECT_TRUE(result(tr, d).is_leaf);
  EXPECT_TRUE(result(tr, d).retains_grad);
}

// Identity: an in-place op and contiguous() of a contiguous tensor return the tensor itself; detach() and a view
// share storage but are other tensors. Backward accumulates into the same .grad tensor (grad mode is off
// inside it), so the second backward does not replace it.
TEST(OracleBackend, IdentityOfValuesAndOfTheirGradient) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int y = b.scalar_op(OpId::MulScalar, x, float_scalar(2.0));
  int same = b.with_format(OpId::Contiguous, y, MemoryFormat::Contiguous);
  int det = b.step(OpId::Detach, {y});
  int w = b.scalar_op(OpId::MulScalar_, det, float_scalar(3.0));
  int s1 = b.step(OpId::Sum, {y});
  int bw1 = b.backward(s1, true);
  int bw2 = b.backward(s1, true);
  Trace tr = b.run();
  EXPECT_EQ(result(tr, same).same_as, y);
  EXPECT_EQ(result(tr, same).alias_of, y);
  EXPECT_EQ(result(tr, det).same_as, det);
  EXPECT_EQ(result(tr, det).alias_of, y);
  EXPECT_EQ(obs(tr.steps.at(w), w).same_as, det);
  ASSERT_EQ(tr.steps.at(bw2).status, StepObs::Status::Ok) << tr.steps.at(bw2).message;
  ASSERT_TRUE(obs(tr.steps.at(bw1), x).grad);
  EXPECT_EQ(obs(tr.steps.at(bw1), x).grad->replaced, 0);
  EXPECT_EQ(obs(tr.steps.at(bw2), x).grad->replaced, 0);
  EXPECT_EQ(obs(tr.steps.at(bw2), x).grad->same_as, -1);
  EXPECT_EQ(obs(tr.steps.at(bw2), x).grad->values, std::vector<double>(6, 4.0));
}

// A .grad's own version and which gradient it is are observed after every step that writes, not only after a
// backward: AccumulateGrad adds into it in place (a version), an in-place op on it as a value bumps it too, and
// a deep copy's gradient is its own unless one memo copied the gradient already (then it is that copy).
TEST(OracleBackend, AGradsVersionAndStorageAreObservedAfterEveryWrite) {
  Builder b;
  int x = b.rand({3}, DType::Float32, true);
  int s = b.step(OpId::Sum, {x});
  int bw1 = b.backward(s, true);
  int bw2 = b.backward(s, true);
  int g = b.step(OpId::Grad, {x});
  int scaled = b.scalar(OpId::MulScalar_, g, 2.0);
  int cx = b.deepcopy(x, 1);
  int cg = b.deepcopy(g, 1);
  int own = b.deepcopy(x, 2);
  int write = b.unary(OpId::Zero_, b.rand({2}, DType::Float32, false));
  Trace tr = b.run();
  for (int step : {bw1, bw2, scaled, write})
    ASSERT_EQ(tr.steps.at(step).status, StepObs::Status::Ok) << step << ": " << tr.steps.at(step).message;
  const std::int64_t first = obs(tr.steps.at(bw1), x).grad->version;
  EXPECT_EQ(obs(tr.steps.at(bw2), x).grad->version, first + 1);
  ASSERT_TRUE(obs(tr.steps.at(scaled), x).grad);  // mul_ is no backward: the gradient is observed anyway
  EXPECT_EQ(obs(tr.steps.at(scaled), x).grad->version, first + 2);
  EXPECT_EQ(obs(tr.steps.at(scaled), x).grad->values, std::vector<double>(3, 4.0));
  const StepObs& last = tr.steps.at(write);
  EXPECT_EQ(obs(last, x).grad->grad_alias_of, x);
  EXPECT_EQ(obs(last, cx).grad->grad_alias_of, cx);
  EXPECT_EQ(obs(last, cx).grad->same_as, cg);  // one memo: the gradient was copied once
  EXPECT_EQ(obs(last, own).grad->grad_alias_of, own);
  EXPECT_EQ(obs(last, own).grad->same_as, -1);
  EXPECT_EQ(obs(last, own).grad->values, std::vector<double>(3, 4.0));
}

TEST(OracleBackend, LeafGradFollowsDenseLeafStrides) {
  Builder b;
  int t = b.rand_strided({2, 3}, {1, 2}, 0, DType::Float32, true);             // transposed, dense
  int cl = b.rand_strided({1, 2, 2, 2}, {8, 1, 4, 2}, 0, DType::Float32, true);  // channels_last
  int e = b.rand_strided({2, 3}, {0, 1}, 0, DType::Float32, true);             // overlapping: stride 0
  int st = b.step(OpId::Sum, {t});
  int sc = b.step(OpId::Sum, {cl});
  int se = b.step(OpId::Sum, {e});
  int a1 = b.step(OpId::Add, {st, sc});
  int a2 = b.step(OpId::Add, {a1, se});
  int bw = b.backward(a2);
  Trace tr = b.run();
  const StepObs& sb = tr.steps[bw];
  ASSERT_EQ(sb.status, StepObs::Status::Ok) << sb.message;
  EXPECT_EQ(obs(sb, t).grad->strides, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(obs(sb, cl).grad->strides, (std::vector<std::int64_t>{8, 1, 4, 2}));
  EXPECT_EQ(obs(sb, e).grad->strides, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(obs(sb, e).grad->values, std::vector<double>(6, 1.0));
}

TEST(OracleBackend, ScalarKindDrivesTypePromotion) {
  Builder b;
  int i = b.rand({3}, DType::Int64);
  int f = b.rand({3}, DType::Float32);
  int bo = b.rand({3}, DType::Bool);
  Attrs d0;
  d0.dtype = DType::Float64;
  int z64 = b.step(OpId::Zeros, {}, d0);  // 0-dim float64
  int ii = b.scalar_op(OpId::AddScalar, i, int_scalar(2));
  int ifl = b.scalar_op(OpId::AddScalar, i, float_scalar(2.5));
  int bi = b.scalar_op(OpId::AddScalar, bo, int_scalar(1));
  int fz = b.step(OpId::Add, {f, z64});
  int idv = b.step(OpId::Div, {i, i});
  int is = b.step(OpId::Sum, {bo});
  Trace tr = b.run();
  EXPECT_EQ(result(tr, ii).dtype, DType::Int64);
  EXPECT_EQ(result(tr, ifl).dtype, DType::Float32);
  EXPECT_EQ(result(tr, ifl).values, scaled(result(tr, i).values, 1.0, 2.5));
  EXPECT_EQ(result(tr, bi).dtype, DType::Int64);
  EXPECT_EQ(result(tr, fz).dtype, DType::Float32);  // a 0-dim tensor does not promote a dimensioned one
  EXPECT_EQ(result(tr, idv).dtype, DType::Float32);  // true division of integers
  EXPECT_EQ(result(tr, is).dtype, DType::Int64);
}

// Each case is a program whose last step raises; the category is what LibTorch's message classifies as.
struct ErrorCase {
  const char* name;
  Builder program;
  ErrorCategory expected;
};

std::vector<ErrorCase> error_cases() {
  std::vector<ErrorCase> cases;
  auto add = [&](const char* name, ErrorCategory c, auto build) {
    Builder b;
    build(b);
    cases.push_back({name, std::move(b), c});
  };
  add("view of transposed", ErrorCategory::ViewStride, [](Builder& b) {
    int x = b.rand({2, 3});
    b.with_sizes(OpId::View, b.with_dims(OpId::Transpose, x, 0, 1), {6});
  });
  add("view wrong numel", ErrorCategory::Shape, [](Builder& b) { b.with_sizes(OpId::View, b.rand({2, 3}), {4}); });
  add("requires_grad_ on int", ErrorCategory::DType, [](Builder& b) {
    Attrs a;
    a.requires_grad = true;
    b.step(OpId::RequiresGrad_, {b.rand({2}, DType::Int64)}, a);
  });
  add("requires_grad_ on non-leaf", ErrorCategory::RequiresGradFlag, [](Builder& b) {
    int y = b.step(OpId::Neg, {b.rand({2}, DType::Float32, true)});
    Attrs a;
    a.requires_grad = false;
    b.step(OpId::RequiresGrad_, {y}, a);
  });
  add("rand int requiring grad", ErrorCategory::DType,
      [](Builder& b) { b.rand({2}, DType::Int64, true); });
  add("retain_grad without grad", ErrorCategory::RetainGrad,
      [](Builder& b) { b.step(OpId::RetainGrad, {b.rand({2})}); });
  add("backward without grad", ErrorCategory::NoGradFn, [](Builder& b) { b.backward(b.step(OpId::Sum, {b.rand({2})})); });
  add("contiguous preserve of non-contiguous", ErrorCategory::MemoryFormat, [](Builder& b) {
    b.with_format(OpId::Contiguous, b.with_dims(OpId::Transpose, b.rand({2, 3}), 0, 1), MemoryFormat::Preserve);
  });
  add("clone channels_last 3-d", ErrorCategory::MemoryFormat,
      [](Builder& b) { b.with_format(OpId::Clone, b.rand({2, 3, 4}), MemoryFormat::ChannelsLast); });
  add("empty_like channels_last_3d 4-d", ErrorCategory::MemoryFormat,
      [](Builder& b) { b.with_format(OpId::EmptyLike, b.rand({2, 3, 4, 5}), MemoryFormat::ChannelsLast3d); });
  add("as_strided past storage", ErrorCategory::StorageBounds, [](Builder& b) {
    Attrs a;
    a.sizes = {4};
    a.strides = {2};
    b.step(OpId::AsStrided, {b.rand({6})}, a);
  });
  add("select index", ErrorCategory::IndexRange, [](Builder& b) {
    Attrs a;
    a.dim = 0;
    a.index = 5;
    b.step(OpId::Select, {b.rand({2, 3})}, a);
  });
  add("transpose dim", ErrorCategory::IndexRange, [](Builder& b) { b.with_dims(OpId::Transpose, b.rand({2, 3}), 0, 2); });
  add("permute repeated", ErrorCategory::IndexRange, [](Builder& b) {
    Attrs a;
    a.dims = {0, 0};
    b.step(OpId::Permute, {b.rand({2, 3})}, a);
  });
  add("add broadcast", ErrorCategory::Shape,
      [](Builder& b) { b.step(OpId::Add, {b.rand({2, 3}), b.rand({4})}); });
  add("expand incompatible", ErrorCategory::Shape,
      [](Builder& b) { b.with_sizes(OpId::Expand, b.rand({2, 3}), {2, 4}); });
  add("add_ needs broadcast of self", ErrorCategory::Shape,
      [](Builder& b) { b.step(OpId::Add_, {b.rand({3}), b.rand({2, 3})}); });
  add("sub bool", ErrorCategory::DType,
      [](Builder& b) { b.step(OpId::Sub, {b.rand({2}, DType::Bool), b.rand({2}, DType::Bool)}); });
  add("neg bool", ErrorCategory::DType, [](Builder& b) { b.step(OpId::Neg, {b.rand({2}, DType::Bool)}); });
  add("int add_ float", ErrorCategory::DType,
      [](Builder& b) { b.scalar_op(OpId::AddScalar_, b.rand({2}, DType::Int64), float_scalar(0.5)); });
  add("int pow negative int", ErrorCategory::DType,
      [](Builder& b) { b.scalar_op(OpId::Pow, b.rand({2}, DType::Int64), int_scalar(-1)); });
  add("mean of int", ErrorCategory::DType, [](Builder& b) { b.step(OpId::Mean, {b.rand({2}, DType::Int64)}); });
  add("detach_ of view", ErrorCategory::DetachView, [](Builder& b) {
    b.step(OpId::Detach_, {b.with_dims(OpId::Transpose, b.rand({2, 3}, DType::Float32, true), 0, 1)});
  });
  add("write to expanded", ErrorCategory::Overlap, [](Builder& b) {
    b.scalar_op(OpId::AddScalar_, b.with_sizes(OpId::Expand, b.rand({1, 3}), {2, 3}), int_scalar(1));
  });
  add("slice step 0", ErrorCategory::Argument, [](Builder& b) {
    Attrs a;
    a.end = 2;
    a.step = 0;
    b.step(OpId::Slice, {b.rand({3})}, a);
  });
  add("zeros negative size", ErrorCategory::Argument, [](Builder& b) {
    Attrs a;
    a.sizes = {2, -1};
    b.step(OpId::Zeros, {}, a);
  });
  add("in-place on view made under no_grad", ErrorCategory::ViewInPlace, [](Builder& b) {
    int x = b.step(OpId::Neg, {b.rand({2, 3}, DType::Float32, true)});
    Attrs a;
    a.dim = 0;
    a.dim1 = 1;
    int v = b.step(OpId::Transpose, {x}, a, /*grad_enabled=*/false);
    b.scalar_op(OpId::MulScalar_, v, int_scalar(2));
  });
  add("in-place on view of leaf", ErrorCategory::LeafInPlace, [](Builder& b) {
    b.scalar_op(OpId::MulScalar_, b.with_dims(OpId::Transpose, b.rand({2, 3}, DType::Float32, true), 0, 1),
                int_scalar(2));
  });
  return cases;
}

TEST(OracleBackend, ErrorsAreClassified) {
  for (const auto& c : error_cases()) {
    Trace tr = c.program.run();
    ASSERT_FALSE(tr.steps.empty());
    const StepObs& last = tr.steps.back();
    EXPECT_EQ(last.status, StepObs::Status::Error) << c.name;
    EXPECT_EQ(last.category, c.expected)
        << c.name << ": got " << judge::to_string(last.category) << " for: " << last.message;
    EXPECT_EQ(last.message.find("Exception raised from"), std::string::npos) << c.name << ": " << last.message;
    for (std::size_t i = 0; i + 1 < tr.steps.size(); ++i)
      EXPECT_EQ(tr.steps[i].status, StepObs::Status::Ok) << c.name << " step " << i << ": " << tr.steps[i].message;
  }
}

}  // namespace
}  // namespace parity::oracle
