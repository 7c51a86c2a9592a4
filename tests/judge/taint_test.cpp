// The run loop's taint (judge/run.cpp), on LibTorch: which values and gradients hold undefined contents
// (uninitialised memory, order-dependent writes into overlapping memory) and so are not compared, and, as much,
// which stay compared. Too broad a taint hides bugs on both sides; too narrow a one makes false alarms.
#include <gtest/gtest.h>

#include <vector>

#include "program/program_builder.h"
#include "tests/support/torch_trace.h"

namespace parity::judge {
namespace {

using program::DType;
using program::OpId;
using program::Scalar;
using testing::Builder;
using testing::obs;
using testing::result;

// Uninitialised memory taints only what it reaches: the gradient of x flows through mul with `empty`'s values
// (MulBackward0 reads them) and is not compared; the gradient of z, in another graph, still is, before and after.
TEST(Taint, UndefinedMemoryTaintsOnlyTheGradientsItReaches) {
  Builder b;
  int x = b.rand({3}, DType::Float32, true);
  program::Attrs sizes;
  sizes.sizes = {3};
  int e = b.step(OpId::Empty, {}, sizes);
  int eg = b.requires_grad_(e);
  int z = b.rand({3}, DType::Float32, true);
  int p = b.binary(OpId::Mul, x, eg);
  int s1 = b.step(OpId::Sum, {p});
  int w = b.scalar_op(OpId::MulScalar, z, Scalar{Scalar::Kind::Float, 2.0});
  int s2 = b.step(OpId::Sum, {w});
  int bw2 = b.backward(s2);
  int bw1 = b.backward(s1);
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw1).status, StepObs::Status::Ok) << tr.steps.at(bw1).message;
  EXPECT_FALSE(result(tr, e).values_defined);
  EXPECT_FALSE(result(tr, p).values_defined);
  EXPECT_TRUE(result(tr, w).values_defined);
  EXPECT_EQ(obs(tr.steps.at(bw2), z).grad->values, std::vector<double>(3, 2.0));
  EXPECT_EQ(obs(tr.steps.at(bw1), z).grad->values, std::vector<double>(3, 2.0));
  ASSERT_TRUE(obs(tr.steps.at(bw1), x).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw1), x).grad->values.empty());
}

// AccumulateGrad adds into an assigned .grad in place: into a gradient whose elements share memory the sum
// depends on the order of the writes (undefined), so that gradient is not compared; a dense one still is.
TEST(Taint, AccumulatingIntoAnOverlappingGradIsUndefined) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int z = b.rand({2, 3}, DType::Float32, true);
  int overlapping = b.rand_strided({2, 3}, {1, 1}, 0, DType::Float32, false);
  int dense = b.rand({2, 3}, DType::Float32, false);
  b.step(OpId::SetGrad, {x, overlapping});
  b.step(OpId::SetGrad, {z, dense});
  int s = b.step(OpId::Sum, {b.binary(OpId::Add, x, z)});
  int bw = b.backward(s);
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Ok) << tr.steps.at(bw).message;
  ASSERT_TRUE(obs(tr.steps.at(bw), x).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw), x).grad->values.empty());
  EXPECT_FALSE(obs(tr.steps.at(bw), overlapping).values_defined);  // it is that gradient
  ASSERT_TRUE(obs(tr.steps.at(bw), z).grad);
  EXPECT_EQ(obs(tr.steps.at(bw), z).grad->values.size(), 6u);
  EXPECT_TRUE(obs(tr.steps.at(bw), dense).values_defined);
}

// An undefined gradient (samples, here) reaches more than the gradients it makes: accumulated into a .grad the
// program assigned (x is its own .grad) it makes what the program holds there undefined, and a later result that
// is that tensor (requires_grad_ returns its operand) has the undefined .grad too.
TEST(Taint, AnUndefinedGradientReachesWhatHoldsIt) {
  Builder b;
  int x = b.rand({2, 2}, DType::Float32, true);
  b.step(OpId::SetGrad, {x, x});
  int r = b.step(OpId::RandLike, {x});
  int bw = b.step(OpId::BackwardGrad, {x, r});
  program::Attrs keep;
  keep.requires_grad = true;
  int same = b.step(OpId::RequiresGrad_, {x}, keep);
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Ok) << tr.steps.at(bw).message;
  EXPECT_FALSE(obs(tr.steps.at(bw), x).values_defined);
  ASSERT_TRUE(result(tr, same).grad);
  EXPECT_TRUE(result(tr, same).grad->values.empty());
}

// The same gradient reaches a root's retained .grad before a backward raises (its graph freed), and a tensor
// that is a .grad holds undefined values once set_data gives it samples.
TEST(Taint, AnUndefinedGradientReachesARetainedGradBeforeARaiseAndThroughSetData) {
  Builder b;
  int x = b.rand({4}, DType::Float32, true);
  int y = b.step(OpId::Sigmoid, {x});
  b.step(OpId::RetainGrad, {y});
  b.backward(b.step(OpId::Sum, {y}));
  int bw = b.step(OpId::BackwardGrad, {y, b.step(OpId::RandLike, {x})});
  int g = b.step(OpId::Grad, {x});
  int sd = b.step(OpId::SetData, {g, b.step(OpId::RandLike, {g})});
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Error) << "the graph was freed by the first backward";
  ASSERT_TRUE(obs(tr.steps.at(bw), y).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw), y).grad->values.empty());
  ASSERT_EQ(tr.steps.at(sd).status, StepObs::Status::Ok) << tr.steps.at(sd).message;
  ASSERT_TRUE(obs(tr.steps.at(sd), x).grad);
  EXPECT_TRUE(obs(tr.steps.at(sd), x).grad->values.empty());
}

// An in-place write through memory whose elements overlap is undefined, and so is its backward, which writes the
// gradient through the same geometry (CopySlices): the gradient of what it added is not compared, nor that of a
// deepcopy of a leaf whose .grad it undefined; a leaf of a separate graph still is.
TEST(Taint, AnUndefinedWriteTaintsTheGradientsItsBackwardMakes) {
  Builder b;
  int base = b.rand_strided({2, 2}, {1, 1}, 0, DType::Float32, false);  // rows overlap
  int w = b.rand({2, 2}, DType::Float32, true);
  int view = b.step(OpId::Transpose, {base}, [] { program::Attrs a; a.dim = 0; a.dim1 = 1; return a; }());
  b.binary(OpId::Add_, view, w);
  int z = b.rand({2}, DType::Float32, true);
  int bw = b.step(OpId::Backward, {b.step(OpId::Sum, {b.binary(OpId::Add, b.step(OpId::Sum, {base}), b.step(OpId::Sum, {z}))})});
  int copy = b.deepcopy(w);
  int again = b.backward(b.step(OpId::Sum, {b.rand({2}, DType::Float32, true)}));  // a backward observes .grad
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Ok) << tr.steps.at(bw).message;
  ASSERT_TRUE(obs(tr.steps.at(bw), w).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw), w).grad->values.empty());
  ASSERT_TRUE(obs(tr.steps.at(bw), z).grad);
  EXPECT_EQ(obs(tr.steps.at(bw), z).grad->values.size(), 2u);
  ASSERT_TRUE(obs(tr.steps.at(again), copy).grad);
  EXPECT_TRUE(obs(tr.steps.at(again), copy).grad->values.empty());
}

// index_put_ raises from inside its loop after writing part of self; when self is also the index (through a
// view of another layout, which LibTorch cannot detect), what it wrote is undefined and is not compared. A
// fresh self with a separate index keeps its partial write compared.
TEST(Taint, AnInPlaceOpThatRaisesMidWriteTaintsAnUndefinedWrite) {
  Builder b;
  int idx = b.rand_strided({2, 3}, {6, 2}, 0, DType::Int64, false);  // gaps: not dense
  int self = b.step(OpId::T, {idx});
  program::Attrs acc;
  acc.accumulate = true;
  int vals = b.rand({2}, DType::Int64, false);  // broadcasts to the indexing result [2, 3, 2]
  int put = b.step(OpId::IndexPut_, {self, idx, vals}, acc);
  program::Attrs big;
  big.end = 3;
  big.dtype = DType::Int64;
  int ok_self = b.step(OpId::Zeros, {}, [] { program::Attrs a; a.sizes = {3}; a.dtype = DType::Int64; return a; }());
  int bad = b.rand({3}, DType::Int64, false, 7);
  int put2 = b.step(OpId::IndexPut_, {ok_self, bad, b.step(OpId::Arange, {}, big)}, acc);
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(put).status, StepObs::Status::Error);  // seeded indices reach beyond [-3, 3)
  ASSERT_EQ(tr.steps.at(put).category, ErrorCategory::IndexRange) << tr.steps.at(put).message;
  EXPECT_FALSE(obs(tr.steps.at(put), idx).values_defined);
  ASSERT_EQ(tr.steps.at(put2).status, StepObs::Status::Error);  // seeded indices reach beyond [-3, 3)
  ASSERT_EQ(tr.steps.at(put2).category, ErrorCategory::IndexRange) << tr.steps.at(put2).message;
  EXPECT_TRUE(obs(tr.steps.at(put2), ok_self).values_defined);
}

// Two views of one storage whose elements are disjoint are as defined as two tensors (get_overlap_status says
// No): narrow's halves multiplied in place are compared, and so is the base. Column views of a matrix that share
// a column (not dense, so LibTorch cannot tell and does not raise) make an order-dependent write, not compared.
TEST(Taint, OnlyAWriteReachingItsOperandsMemoryIsUndefined) {
  Builder b;
  int x = b.arange(4, DType::Float32);
  auto narrow = [&](int of, std::int64_t dim, std::int64_t start, std::int64_t length) {
    program::Attrs a;
    a.dim = dim, a.start = start, a.length = length;
    return b.step(OpId::Narrow, {of}, a);
  };
  int lo = narrow(x, 0, 0, 2);
  int put = b.binary(OpId::Mul_, lo, narrow(x, 0, 2, 2));
  int m = b.step(OpId::Clone, {b.with_sizes(OpId::View, b.arange(6, DType::Float32), {2, 3})});
  int left = narrow(m, 1, 0, 2);
  int shared = b.binary(OpId::Add_, left, narrow(m, 1, 1, 2));
  int m2 = b.step(OpId::Clone, {b.with_sizes(OpId::View, b.arange(6, DType::Float32), {2, 3})});
  int apart = b.binary(OpId::Add_, narrow(m2, 1, 0, 1), narrow(m2, 1, 2, 1));
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(put).status, StepObs::Status::Ok) << tr.steps.at(put).message;
  EXPECT_TRUE(obs(tr.steps.at(put), x).values_defined);
  EXPECT_EQ(obs(tr.steps.at(put), x).values, (std::vector<double>{0, 3, 2, 3}));
  ASSERT_EQ(tr.steps.at(shared).status, StepObs::Status::Ok) << tr.steps.at(shared).message;
  EXPECT_FALSE(obs(tr.steps.at(shared), m).values_defined);
  EXPECT_FALSE(obs(tr.steps.at(shared), left).values_defined);
  ASSERT_EQ(tr.steps.at(apart).status, StepObs::Status::Ok) << tr.steps.at(apart).message;
  EXPECT_TRUE(obs(tr.steps.at(apart), m2).values_defined);
  EXPECT_EQ(obs(tr.steps.at(apart), m2).values, (std::vector<double>{2, 1, 2, 8, 4, 5}));
}

// An in-place op that raises before writing (LibTorch's overlap and dtype checks come first) changes nothing,
// so every value stays compared; only index_put_ writes before its raise (the test above).
TEST(Taint, AnInPlaceOpThatRaisesBeforeWritingTaintsNothing) {
  Builder b;
  int x = b.rand({1, 3}, DType::Float32, false);
  int e = b.with_sizes(OpId::Expand, x, {2, 3});
  int add = b.binary(OpId::Add_, e, b.rand({2, 3}, DType::Float32, false));
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(add).status, StepObs::Status::Error);
  EXPECT_EQ(tr.steps.at(add).category, ErrorCategory::Overlap) << tr.steps.at(add).message;
  EXPECT_TRUE(obs(tr.steps.at(add), x).values_defined);
  EXPECT_EQ(obs(tr.steps.at(add), x).values.size(), 3u);
  EXPECT_TRUE(obs(tr.steps.at(add), e).values_defined);
}

// autograd.grad under create_graph returns a gradient with history: a backward from it, seeded with samples,
// reaches the leaves of the graph it came through, whose gradients are then undefined.
TEST(Taint, AnUndefinedSeedReachesThroughACreateGraphGradient) {
  Builder b;
  int x = b.rand({2}, DType::Float32, true);
  int y = b.scalar_op(OpId::MulScalar, x, Scalar{Scalar::Kind::Float, 2.0});
  program::Attrs create;
  create.create_graph = true;
  int g = b.step(OpId::AutogradGradOutputs, {y, x, y}, create);
  int seed = b.step(OpId::RandLike, {x});
  int bw = b.step(OpId::BackwardGrad, {g, seed});
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Ok) << tr.steps.at(bw).message;
  ASSERT_TRUE(obs(tr.steps.at(bw), x).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw), x).grad->values.empty());
}

// An in-place op that saves its operands saves a copy of self as it was (div_'s other's derivative reads it):
// rand_like's samples rewritten by a later write stay undefined in that copy, and so does the gradient through
// it, while the rewritten tensor's values are compared again.
TEST(Taint, AnInPlaceOpsCopyOfAnUndefinedSelfStaysUndefinedAfterARewrite) {
  Builder b;
  const int u = b.step(OpId::RandLike, {b.rand({2})});
  const int c = b.rand({2}, DType::Float32, true);
  b.binary(OpId::Div_, u, c);
  const int z = b.step(OpId::Zero_, {u}, {}, false);
  const int bw = b.backward(b.step(OpId::Sum, {z}));
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(bw).status, StepObs::Status::Ok) << tr.steps.at(bw).message;
  EXPECT_TRUE(result(tr, z).values_defined);
  ASSERT_TRUE(obs(tr.steps.at(bw), c).grad);
  EXPECT_TRUE(obs(tr.steps.at(bw), c).grad->values.empty());
}

// An out= form that shrinks its out writes every new element, but past them the storage keeps what it held:
// undefined samples stay undefined for whatever reads that storage (as_strided); an out it does not resize is
// wholly written, and compared again.
TEST(Taint, AnOutShrunkByItsOpKeepsItsUndefinedStorage) {
  Builder b;
  int samples = b.step(OpId::RandnLike, {b.rand({2, 3}, DType::Float32, false)});
  int same = b.step(OpId::RandnLike, {b.rand({2}, DType::Float32, false)});
  program::Attrs two;
  two.end = 2;
  int ar = b.step(OpId::Arange, {}, two);
  int shrink = b.step(OpId::ExpOut, {samples, ar});  // out first, as an in-place op's destination
  int kept = b.step(OpId::ExpOut, {same, ar});
  program::Attrs whole;
  whole.sizes = {3, 2};
  whole.strides = {2, 1};
  int read = b.step(OpId::AsStrided, {samples}, whole);
  Trace tr = b.run();
  EXPECT_FALSE(result(tr, read).values_defined);
  EXPECT_FALSE(obs(tr.steps.at(shrink), samples).values_defined);
  EXPECT_TRUE(obs(tr.steps.at(kept), same).values_defined);
  EXPECT_EQ(obs(tr.steps.at(kept), same).values.size(), 2u);
}

// as_strided reads its storage where its geometry says, not only its operand's elements: of an empty narrow of
// samples, which fill_ made defined (it has no element), it reads the samples. Found by the soak against 1.13.
// An as_strided over a storage no undefined value shares is still compared.
TEST(Taint, AnAsStridedReadsWhatItsStorageHolds) {
  Builder b;
  int samples = b.step(OpId::RandLike, {b.rand({3, 4}, DType::Float32, false)});
  program::Attrs empty;
  empty.dim = -1;
  empty.start = 2;
  empty.length = 0;
  int none = b.step(OpId::Narrow, {samples}, empty);
  int fill = b.scalar_op(OpId::Fill_, none, Scalar{Scalar::Kind::Float, 1.5});
  program::Attrs geometry;
  geometry.sizes = {5, 3};
  geometry.strides = {0, 3};
  geometry.offset = 1;
  int read = b.step(OpId::AsStrided, {none}, geometry);
  int defined = b.rand({3, 4}, DType::Float32, false);
  int also_read = b.step(OpId::AsStrided, {defined}, geometry);
  Trace tr = b.run();
  ASSERT_EQ(tr.steps.at(read).status, StepObs::Status::Ok) << tr.steps.at(read).message;
  EXPECT_TRUE(obs(tr.steps.at(fill), none).values_defined);
  EXPECT_FALSE(result(tr, read).values_defined);
  EXPECT_TRUE(result(tr, also_read).values_defined);
  EXPECT_EQ(result(tr, also_read).values.size(), 15u);
}

}  // namespace
}  // namespace parity::judge
