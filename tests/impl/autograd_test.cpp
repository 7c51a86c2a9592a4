// Unit tests of impl's tensors and autograd against PyTorch's documented semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/torch_version.h"
#include "tests/support/impl_errors.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

using autograd::grad;
using autograd::grad_fn;

// The release these suites expect LibTorch's behaviour of (tests/support/impl_release.h).
class AutogradGrad : public parity::testing::FollowsTorch113 {};
class BackwardRoots : public parity::testing::FollowsTorch113 {};
class CreateGraph : public parity::testing::FollowsTorch113 {};
class ImplAutograd : public parity::testing::FollowsTorch113 {};
class ImplTensor : public parity::testing::FollowsTorch113 {};
class SetData : public parity::testing::FollowsTorch113 {};


Tensor leaf(const std::vector<double>& v) { return requires_grad_(from_values(v, ScalarType::Float32), true); }

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an impl::Error";
  return ErrorKind::Argument;
}

TEST_F(ImplTensor, ViewsShareStorageAndVersion) {
  Tensor x = from_values({1, 2, 3, 4, 5, 6}, ScalarType::Float32);
  Tensor v = view(x, {2, 3});
  Tensor t = transpose(v, 0, 1);
  EXPECT_EQ(v.storage().key(), x.storage().key());
  add_(t, Scalar::of(1));
  EXPECT_EQ(x.version(), 1u);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{2, 3, 4, 5, 6, 7}));
  Tensor d = variable_data(x);
  add_(d, Scalar::of(1));
  EXPECT_EQ(x.version(), 1u);  // .data has its own version counter
}

TEST_F(ImplTensor, CloneOwnsMemoryAndPreservesDenseStrides) {
  Tensor x = transpose(view(from_values({1, 2, 3, 4, 5, 6}, ScalarType::Float64), {2, 3}), 0, 1);
  Tensor c = clone(x);
  EXPECT_NE(c.storage().key(), x.storage().key());
  EXPECT_EQ(c.strides(), x.strides());
  EXPECT_EQ(clone(x, MemoryFormat::Contiguous).strides(), (Dims{2, 1}));
  EXPECT_EQ(c.to_vector(), x.to_vector());
}

TEST_F(ImplTensor, TypePromotionFollowsScalarKind) {
  Tensor i = from_values({1, 2}, ScalarType::Int64);
  EXPECT_EQ(add(i, Scalar::of_int(1)).dtype(), ScalarType::Int64);
  EXPECT_EQ(add(i, Scalar::of(0.5)).dtype(), ScalarType::Float32);
  EXPECT_EQ(div(i, i).dtype(), ScalarType::Float32);
  Tensor f = from_values({1, 2}, ScalarType::Float32);
  Tensor d0 = from_values({1}, ScalarType::Float64);
  EXPECT_EQ(add(f, view(d0, {})).dtype(), ScalarType::Float32);  // zero-dim ranks below dimensioned
  EXPECT_EQ(kind_of([&] { add_(i, Scalar::of(0.5)); }), ErrorKind::DType);
}

TEST_F(ImplAutograd, CloneIsDifferentiableDetachIsNot) {
  Tensor x = leaf({1, 2, 3});
  Tensor y = clone(x);
  EXPECT_EQ(grad_fn(y)->name(), "CloneBackward0");
  Tensor d = detach(x);
  EXPECT_FALSE(autograd::requires_grad(d));
  EXPECT_TRUE(autograd::is_leaf(d));
  backward(sum(mul(y, Scalar::of(2))));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{2, 2, 2}));
}

TEST_F(ImplAutograd, InPlaceOnSavedTensorRaisesAtBackward) {
  Tensor x = leaf({0, 1});
  Tensor y = exp(x);  // saves its result
  Tensor s = sum(y);
  add_(y, Scalar::of(1));
  EXPECT_EQ(kind_of([&] { backward(s); }), ErrorKind::VersionMismatch);
  Tensor z = add(x, Scalar::of(1));  // saves nothing
  Tensor s2 = sum(z);
  add_(z, Scalar::of(1));
  EXPECT_NO_THROW(backward(s2));
}

TEST_F(ImplAutograd, GraphIsFreedUnlessRetained) {
  Tensor x = leaf({1, 2});
  Tensor s = sum(mul(x, x));
  backward(s, /*retain_graph=*/true);
  backward(s);
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{4, 8}));  // accumulated twice
  EXPECT_EQ(kind_of([&] { backward(s); }), ErrorKind::GraphFreed);
}

TEST_F(ImplAutograd, LeafAndBackwardErrors) {
  Tensor x = leaf({1, 2});
  EXPECT_EQ(kind_of([&] { add_(x, Scalar::of(1)); }), ErrorKind::LeafInPlace);
  EXPECT_EQ(kind_of([&] { add_(select(x, 0, 0), Scalar::of(1)); }), ErrorKind::LeafInPlace);
  {
    autograd::NoGradGuard no_grad;
    add_(x, Scalar::of(1));  // allowed under no_grad
  }
  EXPECT_EQ(x.version(), 1u);
  EXPECT_EQ(kind_of([&] { backward(mul(x, Scalar::of(2))); }), ErrorKind::NonScalarBackward);
  EXPECT_EQ(kind_of([&] { backward(sum(from_values({1}, ScalarType::Float32))); }), ErrorKind::NoGradFn);
  EXPECT_EQ(kind_of([&] { requires_grad_(from_values({1}, ScalarType::Int64)); }), ErrorKind::DType);
  EXPECT_EQ(kind_of([&] { requires_grad_(mul(x, Scalar::of(2)), false); }), ErrorKind::RequiresGradFlag);
}

TEST_F(ImplAutograd, InPlaceOnViewOfNonLeafRebasesHistory) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor y = mul(x, Scalar::of(1));
  Tensor v = slice(y, 0, 1, 3, 1);
  mul_(v, Scalar::of(3));
  EXPECT_EQ(grad_fn(y)->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(grad_fn(v)->name(), "AsStridedBackward0");
  backward(sum(y));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{1, 3, 3, 1}));
}

TEST_F(ImplAutograd, NoGradViewCannotBeWrittenWithGrad) {
  Tensor x = leaf({1, 2});
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = view(x, {2});
  }
  EXPECT_TRUE(autograd::requires_grad(v));
  EXPECT_EQ(kind_of([&] { mul_(v, Scalar::of(2)); }), ErrorKind::ViewInPlace);
}

TEST_F(ImplAutograd, RetainGradAndLeafGradientLayout) {
  Tensor base = from_values({1, 2, 3, 4, 5, 6}, ScalarType::Float32);
  Tensor x = requires_grad_(detach(transpose(view(base, {2, 3}), 0, 1)), true);  // dense, not contiguous
  Tensor y = mul(x, Scalar::of(2));
  retain_grad(y);
  backward(sum(y));
  EXPECT_EQ(grad(x).strides(), x.strides());  // gradient layout contract
  EXPECT_TRUE(grad(y).is_contiguous());
  EXPECT_EQ(grad(y).to_vector(), (std::vector<double>(6, 1)));
}

// LibTorch's detach_() resets grad_fn, requires_grad and output_nr only: a tensor that retained its grad becomes a
// leaf that still says retains_grad (the oracle observes the same; parity compares it).
TEST_F(ImplAutograd, DetachInPlaceKeepsRetainsGrad) {
  Tensor y = mul(leaf({1, 2}), Scalar::of(2));
  EXPECT_FALSE(autograd::retains_grad(y));
  retain_grad(y);
  EXPECT_TRUE(autograd::retains_grad(y));
  detach_(y);
  EXPECT_TRUE(autograd::is_leaf(y));
  EXPECT_FALSE(autograd::requires_grad(y));
  EXPECT_TRUE(autograd::retains_grad(y));
}

TEST_F(ImplAutograd, RetainGradFollowsRegeneratedViewHistoryButNotTheBase) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor y = mul(x, Scalar::of(2));
  retain_grad(y);
  mul_(slice(y, 0, 0, 2, 1), Scalar::of(3));
  backward(sum(y));
  // y's hook stays on its original node, which receives the gradient after CopySlices scaled the slice.
  EXPECT_EQ(grad(y).to_vector(), (std::vector<double>{3, 3, 1, 1}));

  Tensor y2 = mul(x, Scalar::of(2));
  Tensor v = slice(y2, 0, 0, 2, 1);
  retain_grad(v);
  mul_(v, Scalar::of(3));
  backward(sum(v));
  // v's hook moved to its regenerated history (AsStridedBackward0), which this backward runs through.
  ASSERT_TRUE(grad(v).defined());
  EXPECT_EQ(grad(v).to_vector(), (std::vector<double>{1, 1}));
}

// The base's hook stays on its original node through a write via a view (CopySlices), and the base's next
// own write moves it from there to its new node: its .grad is then the gradient reaching that node. Found by the
// interaction recipe (LibTorch 1.13 gives [1, 1]; impl looked for the hook on CopySlices, left it behind, and
// gave the slice's zeroed gradient).
TEST_F(ImplAutograd, RetainGradHookMovesFromWhereItIsAfterAWriteThroughAView) {
  Tensor x = leaf({1, 2});
  Tensor y = add(x, Scalar::of(-1));
  retain_grad(y);
  zero_(as_strided(y, {1}, {1}, 0));
  fill_(y, Scalar::of(2));
  backward(sum(y));
  EXPECT_EQ(grad(y).to_vector(), (std::vector<double>{1, 1}));

  // The hook outlives the node it was on: a view's regenerated history takes it even when nothing else holds the
  // old node any more (after a backward that freed the graph and a write under no_grad).
  Tensor v = as_strided(leaf({1, 2, 3}), {1}, {1}, 1);
  retain_grad(v);
  backward(v);
  {
    autograd::NoGradGuard no_grad;
    fill_(v, Scalar::of(1));
  }
  backward(v);
  EXPECT_EQ(grad(v).to_vector(), (std::vector<double>{2}));
}

// A saved non-leaf input detached in place cannot be unpacked: PyTorch 2.x's error (1.13 fails an internal assert,
// a known divergence). A saved output (exp's result) falls back on the node saving it and still works.
TEST_F(ImplAutograd, ASavedInputDetachedInPlaceRefusesBackward) {
  Tensor x = leaf({1, 2});
  Tensor y = mul(x, Scalar::of(2));
  Tensor p = mul(y, y);
  detach_(y);
  EXPECT_EQ(kind_of([&] { backward(sum(p)); }), ErrorKind::Argument);

  Tensor e = exp(mul(x, Scalar::of(1)));
  Tensor s = sum(e);
  detach_(e);
  backward(s);
  EXPECT_TRUE(grad(x).defined());
}

// A user gradient that must be summed down to the root's shape is reduced in the caller's grad mode: when it is a
// no_grad view whose base was written since, reading its grad_fn raises (LibTorch's validate_outputs).
TEST_F(ImplAutograd, ARootGradientIsReducedInTheCallersGradMode) {
  Tensor x = leaf({1, 2});
  Tensor v;
  {
    autograd::NoGradGuard no_grad;
    v = unsqueeze(x, 0);  // [1, 2]: summed down to x's [2]
    add_(v, Scalar::of(1));
  }
  EXPECT_EQ(kind_of([&] { backward(x, false, v); }), ErrorKind::ViewInPlace);
  Tensor fresh = from_values({1, 1}, ScalarType::Float32);
  backward(x, false, unsqueeze(fresh, 0));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{1, 1}));
}

// retain_grad() on a multi-output view whose base changed raises reading grad_fn; as in LibTorch 1.13, whose hooks
// list already exists by then, a second call marks the tensor without raising (and no node runs its hook).
TEST_F(ImplAutograd, ASecondRetainGradAfterARaisingOneOnlyMarksTheTensor) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor v = split(x, 2, 0).at(0);
  {
    autograd::NoGradGuard no_grad;
    add_(v, Scalar::of(1));
  }
  EXPECT_EQ(kind_of([&] { retain_grad(v); }), ErrorKind::ViewInPlace);
  EXPECT_FALSE(autograd::retains_grad(v));
  retain_grad(v);
  EXPECT_TRUE(autograd::retains_grad(v));
}

TEST_F(ImplTensor, ScalarsThatDoNotFitRaise) {
  Tensor i = zeros({2}, ScalarType::Int64);
  EXPECT_EQ(kind_of([&] { fill_(i, Scalar::of(1e30)); }), ErrorKind::Argument);
  EXPECT_EQ(kind_of([&] { full({2}, Scalar::of(1e300), ScalarType::Float32); }), ErrorKind::Argument);
  EXPECT_NO_THROW(fill_(zeros({2}, ScalarType::Float32), Scalar::of(1.0 / 0.0)));
  EXPECT_EQ(kind_of([&] { arange(3, ScalarType::Bool); }), ErrorKind::DType);
}

}  // namespace
}  // namespace parity::impl

namespace parity::impl {
namespace {

// autograd.grad returns the gradient reaching its input and writes no .grad; only the nodes on a path to the
// input run, so a saved tensor elsewhere in the graph may have been written; an unreachable or non-differentiable
// input raises LibTorch's errors.
TEST_F(AutogradGrad, ReturnsTheGradientRunningOnlyWhatLeadsToTheInput) {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  Tensor y = sum(add(mul(a, Scalar::of(2)), exp(b)));
  Tensor e = exp(b);
  Tensor z = sum(add(mul(a, Scalar::of(2)), e));
  mul_(e, Scalar::of(1));  // ExpBackward0's saved result: only a path through it would unpack it
  Tensor g = autograd_grad(z, a, false);
  EXPECT_EQ(g.to_vector(), (std::vector<double>{2, 2}));
  EXPECT_FALSE(grad(a).defined());
  EXPECT_FALSE(grad(b).defined());
  EXPECT_EQ(autograd_grad(y, y, false).to_vector(), (std::vector<double>{1}));  // nothing runs
  Tensor q = sum(mul(a, a));
  EXPECT_EQ(autograd_grad(q, a, false).to_vector(), (std::vector<double>{2, 4}));
  EXPECT_EQ(kind_of([&] { autograd_grad(q, a, false); }), ErrorKind::GraphFreed);  // the first call freed its path
  Tensor unused = leaf({5});
  Tensor w = sum(mul(a, Scalar::of(3)));
  EXPECT_EQ(kind_of([&] { autograd_grad(w, unused, true); }), ErrorKind::Argument);
  EXPECT_EQ(kind_of([&] { autograd_grad(w, from_values({1}, ScalarType::Float32), true); }), ErrorKind::NoGradFn);
}

TEST_F(AutogradGrad, AllowUnusedGivesNoGradientForAnInputTheGraphDoesNotReach) {
  Tensor a = leaf({1, 2}), unused = leaf({5});
  mul(unused, Scalar::of(2));  // has an accumulator now, on no path from w
  Tensor w = sum(mul(a, Scalar::of(3)));
  EXPECT_FALSE(autograd_grad(w, unused, true, /*allow_unused=*/true).defined());
  EXPECT_EQ(kind_of([&] { autograd_grad(w, unused, true, false); }), ErrorKind::Argument);
  EXPECT_EQ(autograd_grad(w, a, false, true).to_vector(), (std::vector<double>{3, 3}));
  // Not requiring grad is refused whatever allow_unused says.
  EXPECT_EQ(kind_of([&] { autograd_grad(w, from_values({1}, ScalarType::Float32), true, true); }), ErrorKind::NoGradFn);
}

// autograd.grad with grad_outputs: the output's gradient is given (summed down to its shape when it broadcasts,
// as the C++ API does), and the input's gradient returned, no .grad written.
TEST_F(AutogradGrad, TakesTheOutputsGradientFromGradOutputs) {
  Tensor a = leaf({1, 2});
  Tensor y = mul(a, Scalar::of(3));
  EXPECT_EQ(autograd_grad(y, a, from_values({1, -1}, ScalarType::Float32), true, false, false).to_vector(),
            (std::vector<double>{3, -3}));
  Tensor twice = view(from_values({1, 1, 2, 2}, ScalarType::Float32), {2, 2});  // summed down to [2]: (3, 3)
  EXPECT_EQ(autograd_grad(y, a, twice, false, false, false).to_vector(), (std::vector<double>{9, 9}));
  EXPECT_FALSE(grad(a).defined());
}

// autograd.grad's walk stops below the input's topological number (min_topo_nr), so the edge from transpose to
// unsafe_split is never counted. 1.13's CopySlices marks every node its copy_ reads needed: sum runs, then
// transpose, whose gradient reaches unsafe_split after CopySlices' own one used up its count, and the engine
// raises. 2.x marks only the copy_'s first edge, and nothing past the captured sum runs. The wheels do both.
TEST_F(AutogradGrad, AnEdgeTheWalkDidNotCountIsADependencyNotFound) {
  auto run = [] {
    Tensor x = requires_grad_(view(from_values({1.5, 3, 0, -1, -1, -2, -0.5, 1.5, 3, -0.25}, ScalarType::Float32),
                                   {2, 1, 5}), true);
    Tensor u = unsafe_split(x, 1, 1).front();
    Tensor t = transpose(u, 0, 1);
    Tensor s = sum(t);
    copy_(t, s);
    return autograd_grad(u, s, u, false, false, false);
  };
  const auto [kind, message] = testing::error_of([&] { run(); });
  EXPECT_EQ(kind, ErrorKind::Argument);
  EXPECT_EQ(message, "dependency not found for UnsafeSplitBackward0");
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_EQ(run().to_vector(), (std::vector<double>{42.5}));
}

// Several roots run as one graph task: a node both reach runs once, after both delivered, with their sum.
TEST_F(BackwardRoots, ANodeBothRootsReachRunsOnceWithTheSum) {
  Tensor a = leaf({1, 2});
  Tensor y = mul(a, a);  // MulBackward0 saves a: a second run would raise graph_freed
  Tensor s1 = sum(y), s2 = sum(mul(y, Scalar::of(3)));
  backward(std::vector<Tensor>{s1, s2}, false);
  EXPECT_EQ(grad(a).to_vector(), (std::vector<double>{8, 16}));  // (1 + 3) * 2a
  Tensor b = leaf({2});
  Tensor t = mul(b, Scalar::of(5));
  backward(std::vector<Tensor>{t, t}, false);  // one root twice: its gradients add up
  EXPECT_EQ(grad(b).to_vector(), (std::vector<double>{10}));
  Tensor c = leaf({1});
  backward(std::vector<Tensor>{c, sum(mul(c, Scalar::of(2)))}, false);  // a leaf root accumulates with the rest
  EXPECT_EQ(grad(c).to_vector(), (std::vector<double>{3}));
}

TEST_F(BackwardRoots, EveryImplicitGradientIsMadeBeforeAnyRootIsChecked) {
  Tensor a = leaf({1, 2});
  Tensor plain = from_values({1}, ScalarType::Float32);
  // Root 1 cannot have an implicit gradient: that error comes first, although root 0 has no grad_fn.
  EXPECT_EQ(kind_of([&] { backward(std::vector<Tensor>{plain, mul(a, Scalar::of(2))}, false); }),
            ErrorKind::NonScalarBackward);
  try {
    backward(std::vector<Tensor>{sum(a), plain}, false);
    ADD_FAILURE() << "a root without grad_fn must raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NoGradFn);
    EXPECT_EQ(std::string(e.what()).rfind("element 1 of tensors does not require grad", 0), 0u) << e.what();
  }
  EXPECT_FALSE(grad(a).defined());  // nothing ran
}

// set_data swaps what a tensor holds under its autograd state: LibTorch 1.13's results for each case.
TEST_F(SetData, TheTensorKeepsItsIdentityAutogradStateAndVersionCounter) {
  Tensor x = leaf({1, 1, 1});
  Tensor y = mul(x, Scalar::of(2));
  Tensor n = zeros({4}, ScalarType::Float32);
  add_(n, Scalar::of(1));
  set_data(x, n);
  EXPECT_EQ(x.sizes(), (Dims{4}));
  EXPECT_EQ(x.storage().key(), n.storage().key());
  EXPECT_EQ(x.version(), 0u);  // its own counter, not n's
  add_(n, Scalar::of(1));
  EXPECT_EQ(x.version(), 0u);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{2, 2, 2, 2}));
  EXPECT_TRUE(autograd::is_leaf(x));
  EXPECT_TRUE(autograd::requires_grad(x));
  // The accumulator y's graph holds still has x's old shape: the gradient it receives fits it, and is stolen.
  backward(sum(y));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{2, 2, 2}));
}

TEST_F(SetData, AnAccumulatorOfAnotherDtypeIsForgottenButStillRunsForTheOldGraph) {
  Tensor a = leaf({1, 1});
  Tensor b = mul(a, Scalar::of(2));
  set_data(a, ones({2}, ScalarType::Float64));
  backward(sum(b));  // the old accumulator
  EXPECT_EQ(grad(a).dtype(), ScalarType::Float32);
  backward(sum(mul(a, Scalar::of(3))));  // a new one, of Float64, adds into the Float32 .grad
  EXPECT_EQ(grad(a).dtype(), ScalarType::Float32);
  EXPECT_EQ(grad(a).to_vector(), (std::vector<double>{5, 5}));
}

TEST_F(SetData, RefusesIntegersForATensorRequiringGradAndKeepsANonLeafsGradFn) {
  Tensor d = leaf({1, 1});
  EXPECT_EQ(kind_of([&] { set_data(d, ones({2}, ScalarType::Int64)); }), ErrorKind::DType);
  EXPECT_EQ(d.dtype(), ScalarType::Float32);
  Tensor plain = ones({2}, ScalarType::Float32);
  set_data(plain, ones({5}, ScalarType::Int64));  // nothing requires grad: any dtype
  EXPECT_EQ(plain.dtype(), ScalarType::Int64);
  Tensor e = leaf({1, 1});
  Tensor f = mul(e, Scalar::of(2));
  set_data(f, zeros({3}, ScalarType::Float32));
  EXPECT_EQ(grad_fn(f)->name(), "MulBackward1");
  EXPECT_EQ(kind_of([&] { backward(sum(f)); }), ErrorKind::Shape);  // [3] into MulBackward1's [2]
  // A leaf given other dims: its old accumulator's gradient cannot be laid out like it.
  Tensor h = leaf({1, 1, 1});
  Tensor hh = mul(h, Scalar::of(2));
  set_data(h, zeros({2, 2}, ScalarType::Float32));
  EXPECT_EQ(kind_of([&] { backward(sum(hh)); }), ErrorKind::Shape);
  EXPECT_FALSE(grad(h).defined());
}

// A saved input is the tensor itself: after set_data the derivative reads the new data, and a version mismatch
// prints the new sizes.
TEST_F(SetData, ASavedInputIsReadAsItIsWhenUnpacked) {
  Tensor x = leaf({1, 1, 1});
  Tensor y = pow(x, Scalar::of(2.0));  // PowBackward0 saves x
  {
    autograd::NoGradGuard no_grad;
    add_(x, Scalar::of(0));
  }
  set_data(x, sum(from_values({1, 2}, ScalarType::Float32)));
  try {
    backward(sum(y));
    ADD_FAILURE() << "x was modified in place";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[CPUFloatType []] is at version 1"), std::string::npos) << e.what();
  }
  Tensor a = leaf({1, 2});
  Tensor b = mul(a, a);
  set_data(a, from_values({3, 4}, ScalarType::Float32));
  backward(sum(b));
  EXPECT_EQ(grad(a).to_vector(), (std::vector<double>{6, 8}));  // 2a with a's new values
}

// MvBackward0 reads its saved operands as they are: set_data can make them something mv and outer refuse.
TEST_F(SetData, MvBackwardChecksItsSavedOperandsAsATenDoes) {
  auto message_of = [](const Tensor& m0, const Tensor& v0, bool change_mat, const Tensor& data) {
    Tensor m = m0, v = v0;
    Tensor y = matmul(m, v);
    set_data(change_mat ? m : v, data);
    try {
      backward(sum(y));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("ok");
  };
  Tensor ones2 = ones({2}, ScalarType::Float32);
  auto rg = [](Tensor t) { return requires_grad_(t, true); };
  EXPECT_EQ(message_of(ones({2, 2}, ScalarType::Float32), rg(ones({2}, ScalarType::Float32)), true, ones2),
            "vector + matrix @ vector expected, got 1, 1, 1");
  EXPECT_EQ(message_of(ones({2, 2}, ScalarType::Float32), rg(ones({2}, ScalarType::Float32)), true, ones({}, ScalarType::Float32)),
            "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(message_of(ones({2, 2}, ScalarType::Float32), rg(ones({2}, ScalarType::Float32)), true, ones({2, 2, 2}, ScalarType::Float32)),
            "t() expects a tensor with <= 2 dimensions, but self is 3D");
  EXPECT_EQ(message_of(rg(ones({2, 2}, ScalarType::Float32)), ones2, false, ones({2, 1}, ScalarType::Float32)),
            "outer: Expected 1-D argument vec2, but got 2-D");
}

// ClampBackward1 reads its saved self as it is now: of another dtype after set_data, compared with the bound.
TEST_F(SetData, ClampBackwardReadsASavedSelfOfAnotherDtype) {
  Tensor x = leaf({-3, 0.5});
  Tensor y = clamp(x, std::nullopt, Scalar::of(-1.0));
  set_data(x, from_values({-2, -0.5}, ScalarType::BFloat16));
  backward(y, false, from_values({1, 1}, ScalarType::Float32));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{1, 0}));
  Tensor a = leaf({-3, 0.5});
  Tensor b = clamp(a, std::nullopt, Scalar::of(-1.0));
  set_data(a, from_values({-2, -0.5, 1}, ScalarType::Float32));
  EXPECT_EQ(kind_of([&] { backward(b, false, from_values({1, 1}, ScalarType::Float32)); }), ErrorKind::Shape);
}

// A gradient cloned into a leaf's layout takes the leaf's dtype, which set_data may have changed.
TEST_F(SetData, AClonedGradientTakesTheLeafsCurrentDtype) {
  Tensor x = requires_grad_(zeros({2, 2}, ScalarType::Float32), true);
  Tensor y = sigmoid(x);
  set_data(x, t(view(from_values({1, 2, 3, 4}, ScalarType::Float64), {2, 2})));  // not the gradient's layout
  backward(sum(y));
  EXPECT_EQ(grad(x).dtype(), ScalarType::Float64);
  EXPECT_EQ(grad(x).strides(), (Dims{1, 2}));
}

// LibTorch 1.13 delivers a CopySlices node's gradients past the base's edge even where no captured edge lies
// beyond: a leaf there accumulates, another node only fills a retained .grad.
TEST_F(AutogradGrad, CopySlicesDeliversToItsLeavesAsLibTorch113Does) {
  Tensor a = leaf({1, 1, 1, 1});
  Tensor b = mul(a, Scalar::of(1));
  Tensor w = leaf({1, 1});
  Tensor v = slice(b, 0, 0, 2, 1);
  add_(v, w);
  Tensor g = autograd_grad(sum(b), a, false);
  EXPECT_EQ(g.to_vector(), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_FALSE(grad(a).defined());
  EXPECT_EQ(grad(w).to_vector(), (std::vector<double>{1, 1}));

  Tensor cl = leaf({1, 1, 1, 1});
  Tensor c = mul(cl, Scalar::of(1));
  Tensor u = leaf({1, 1});
  Tensor y = mul(u, Scalar::of(2));
  retain_grad(y);
  add_(slice(c, 0, 0, 2, 1), y);
  autograd_grad(sum(c), cl, false);
  EXPECT_TRUE(grad(y).defined());
  EXPECT_FALSE(grad(u).defined());
}

// PyTorch's generated nodes compute only the outputs the running graph task needs (task_should_compute_output):
// autograd.grad towards x never computes, nor validates, the gradient of values that index_put_ wrote nothing
// with (a mask of no element: [0] against values' [1, 1]), which a plain backward refuses.
TEST_F(AutogradGrad, ComputesNoGradientItsGraphTaskDoesNotNeed) {
  Tensor x = leaf({2});
  Tensor xn = mul(view(x, {1, 1}), Scalar::of(-1.0));
  Tensor mask = zeros({1, 1}, ScalarType::Bool);
  Tensor values = view(leaf({5}), {1, 1});
  index_put_(xn, mask, values, false);
  EXPECT_EQ(autograd_grad(xn, x, /*retain_graph=*/true).to_vector(), (std::vector<double>{-1}));
  EXPECT_EQ(kind_of([&] { backward(xn); }), ErrorKind::Shape);
}

// create_graph: the formulas run with grad mode on. sigmoid's derivative is the op sigmoid_backward, whose own
// node (SigmoidBackwardBackward0) gives the second derivative s(1-s)(1-2s).
TEST_F(CreateGraph, SigmoidsDerivativeIsRecordedAndDifferentiable) {
  const std::vector<double> xs{0.5, -1.0};
  Tensor x = leaf(xs);
  Tensor g = autograd_grad(sum(sigmoid(x)), x, /*retain_graph=*/true, /*allow_unused=*/false, /*create_graph=*/true);
  ASSERT_TRUE(autograd::requires_grad(g));
  EXPECT_EQ(grad_fn(g)->name(), "SigmoidBackwardBackward0");
  backward(sum(g));
  const std::vector<double> second = grad(x).to_vector();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double s = 1 / (1 + std::exp(-xs[i]));
    EXPECT_NEAR(g.to_vector()[i], s * (1 - s), 1e-6);
    EXPECT_NEAR(second[i], s * (1 - s) * (1 - 2 * s), 1e-6);
  }
}

// PyTorch's codegen guards no saved tensor of a *_backward op: ThresholdBackwardBackward0 saves relu's result
// even though only that result's gradient is needed. The first backward through .grad frees it (and then fails
// at the freed ReluBackward0); autograd.grad towards relu's result, which runs ThresholdBackwardBackward0 but not
// ReluBackward0, fails unpacking it.
TEST_F(CreateGraph, ABackwardOpsSavedTensorsAreAlwaysSaved) {
  Tensor x = leaf({1, -1});
  Tensor r = relu(x);
  backward(sum(r), /*retain_graph=*/false, Tensor(), /*create_graph=*/true);
  Tensor s = sum(grad(x));
  EXPECT_EQ(kind_of([&] { backward(s); }), ErrorKind::GraphFreed);
  EXPECT_EQ(kind_of([&] { autograd_grad(s, r, false); }), ErrorKind::GraphFreed);
}

// SigmoidBackwardBackward0 saves sigmoid's output and the gradient it was given; with both written before the
// second backward, the one unpacked first is named: output in 1.13 (its generated node's member order),
// grad_output in 2.x (by name, VersionGate::SavedUnpackByName).
TEST_F(CreateGraph, ABackwardBackwardNodeUnpacksItsSavedTensorsInTheReleasesOrder) {
  auto stale_one = [] {
    Tensor x = leaf({0.25, 0.5});
    Tensor y = sigmoid(x);
    Tensor z = from_values({1, 2}, ScalarType::Float32);
    Tensor g = autograd_grad(y, x, z, /*retain_graph=*/false, false, /*create_graph=*/true);
    sub_(z, g);
    Tensor s = sum(z);
    clamp_(y, Scalar::of(-0.0), Scalar::of_int(-1));
    auto raised = testing::error_of([&] { backward(s); });
    // The node saved z, whose history now leads back to the node: a cycle (PyTorch's too) that only a backward
    // which ran through, freeing the graph, would have broken.
    detach_(z);
    return raised;
  };
  const auto [kind, message] = stale_one();
  EXPECT_EQ(kind, ErrorKind::VersionMismatch);
  EXPECT_NE(message.find("output 0 of SigmoidBackward0"), std::string::npos) << message;
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  const auto [kind2, message2] = stale_one();
  EXPECT_EQ(kind2, ErrorKind::VersionMismatch);
  EXPECT_NE(message2.find("output 0 of Sub,"), std::string::npos) << message2;
}

// A view's gradient is an ATen op (slice_backward, select_backward, ...) whose own derivative is the view again:
// under create_graph the gradient's grad_fn is SliceBackwardBackward0, and a second backward slices.
TEST_F(CreateGraph, AViewsGradientIsAnOpDifferentiableInTurn) {
  Tensor x = leaf({0, 1, 2, 3});
  Tensor g = autograd_grad(sum(exp(slice(x, 0, 1, 3, 1))), x, /*retain_graph=*/true, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "SliceBackwardBackward0");
  backward(sum(g));
  const std::vector<double> second = grad(x).to_vector();
  EXPECT_EQ(second[0], 0);
  EXPECT_NEAR(second[1], std::exp(1.0), 1e-5);
  EXPECT_NEAR(second[2], std::exp(2.0), 1e-5);
  EXPECT_EQ(second[3], 0);
}

// A multi-output view's gradient joins its outputs' gradients with cat (split) or stack (unbind), ops recorded
// under create_graph whose derivatives hand each output its piece again.
TEST_F(CreateGraph, AMultiOutputViewsGradientIsACatOrAStack) {
  Tensor x = leaf({0, 1, 2, 3});
  std::vector<Tensor> pieces = split(x, 3, 0);  // [0, 1, 2] and [3]
  Tensor g = autograd_grad(sum(exp(pieces[1])), x, /*retain_graph=*/true, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "CatBackward0");
  backward(sum(g));
  const std::vector<double> second = grad(x).to_vector();
  EXPECT_EQ(second[0], 0);
  EXPECT_EQ(second[2], 0);
  EXPECT_NEAR(second[3], std::exp(3.0), 1e-4);

  Tensor y = leaf({0, 1});
  Tensor h = autograd_grad(sum(exp(unbind(y, 0)[0])), y, true, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(h)->name(), "StackBackward0");
  backward(sum(h));
  EXPECT_NEAR(grad(y).to_vector()[0], 1.0, 1e-6);
  EXPECT_EQ(grad(y).to_vector()[1], 0);
}

// Generated nodes compute their inputs' gradients in the alphabetical order of the inputs' names: mul's other
// (b) before self (a), so under create_graph b's gradient node is made first (a lower sequence number), which
// orders what a second backward runs.
TEST_F(CreateGraph, FormulasRunInTheAlphabeticalOrderOfTheirInputs) {
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  backward(sum(mul(a, b)), /*retain_graph=*/false, Tensor(), /*create_graph=*/true);
  // Each .grad is CopyBackwards of the formula's result: its edge 1 is the node that made it.
  const auto made_by = [](const Tensor& g) { return grad_fn(g)->next_edges().at(1).fn; };
  ASSERT_TRUE(made_by(grad(a)) && made_by(grad(b)));
  EXPECT_EQ(made_by(grad(a))->name(), "MulBackward0");
  EXPECT_LT(made_by(grad(b))->sequence_nr(), made_by(grad(a))->sequence_nr());
}

// index's gradient is zeros.index_put_(indices, grad, accumulate) through at::_index_put_impl_, recorded under
// create_graph as IndexPutImplBackward0, whose derivative for the gradient indexes again.
TEST_F(CreateGraph, IndexsGradientIsAnIndexPutDifferentiableInTurn) {
  Tensor x = leaf({0, 1, 2});
  Tensor idx = from_values({2, 2}, ScalarType::Int64);
  Tensor g = autograd_grad(sum(exp(index(x, idx))), x, /*retain_graph=*/true, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "IndexPutImplBackward0");
  EXPECT_EQ(g.version(), 1u);
  backward(sum(g));
  EXPECT_EQ(grad(x).to_vector()[0], 0);
  EXPECT_NEAR(grad(x).to_vector()[2], 2 * std::exp(2.0), 1e-4);
}

// as_strided's gradient is a view of a buffer over the storage both geometries reach. Where the input geometry
// may overlap itself, every buffer element is divided by the times the input uses it, so the elements it does
// not reach read 0 / 0 or x / 0 (an as_strided of the gradient shows them); where it cannot, they stay 0. The
// 1.13.1 and 2.3.0 wheels agree.
TEST_F(AutogradGrad, AsStridedsGradientBufferIsDividedByTheInputsUses) {
  auto leaf_over = [](std::vector<double> storage, const Dims& sizes, const Dims& strides, std::int64_t offset) {
    return requires_grad_(detach(as_strided(from_values(storage, ScalarType::Float32), sizes, strides, offset)), true);
  };
  Tensor x = leaf_over({1, 2, 3}, {2}, {0}, 2);  // one element, used twice
  Tensor g = autograd_grad(as_strided(x, {}, {}, 0), x, false);
  const std::vector<double> buffer = as_strided(g, {3}, {1}, 0).to_vector();
  EXPECT_TRUE(std::isinf(buffer[0]) && buffer[0] > 0);  // the output's 1, used by no input element
  EXPECT_TRUE(std::isnan(buffer[1]));
  EXPECT_EQ(buffer[2], 0);
  Tensor y = leaf_over({1, 2, 3, 4, 5}, {2}, {2}, 0);  // no overlap: the gap stays 0
  Tensor h = autograd_grad(sum(as_strided(y, {2}, {2}, 0)), y, false);
  EXPECT_EQ(as_strided(h, {3}, {1}, 0).to_vector(), (std::vector<double>{1, 0, 1}));
}

// IndexPutBackward0 gives self grad.index_put(indices, zeros_like(values)): aten::index_put, whose clone is
// written below the ADInplaceOrView key, so that gradient is at version 0 (LibTorch 1.13 shows it).
TEST_F(AutogradGrad, IndexPutsGradientForSelfIsAtVersionZero) {
  Tensor x = leaf({1, 2, 3});
  Tensor c = clone(x);
  index_put_(c, from_values({0, 2}, ScalarType::Int64), from_values({7, 8}, ScalarType::Float32), false);
  Tensor g = autograd_grad(c, x, ones({3}, ScalarType::Float32), false, false, false);
  EXPECT_EQ(g.to_vector(), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(g.version(), 0u);
}

// as_strided's backward is composed of ops (squeeze, sum, copy_ or index_add_ into a zeroed buffer, div_, a view),
// so under create_graph its gradient has history wherever the incoming gradient has. Found by the soak against
// 1.13: a view regenerated after its base was written (AsStridedBackward0), given a gradient requiring grad,
// returned a gradient that did not, and a .grad that stayed a leaf.
TEST_F(CreateGraph, AsStridedsGradientHasTheIncomingGradientsHistory) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor s = select(x, 0, 1);
  {
    autograd::NoGradGuard no_grad;
    add_(x, Scalar::of(1));  // s's history now starts at x: AsStridedBackward0
  }
  Tensor w = requires_grad_(from_values({3}, {}, ScalarType::Float32), true);
  Tensor g = autograd_grad(s, x, w, false, false, /*create_graph=*/true);
  EXPECT_TRUE(autograd::requires_grad(g));
  EXPECT_EQ(grad_fn(g)->name(), "AsStridedBackward0");
  EXPECT_EQ(g.to_vector(), (std::vector<double>{0, 3, 0, 0}));
  backward(sum(mul(g, g)));  // w^2
  EXPECT_EQ(grad(w).to_vector(), (std::vector<double>{6}));

  // An output geometry that reaches one element twice scatters by accumulating: o = [[x0, x1], [x1, x2]].
  Tensor y = leaf({1, 2, 3});
  Tensor o = as_strided(y, {2, 2}, {1, 1}, 0);
  Tensor h = autograd_grad(sum(mul(o, o)), y, false, false, /*create_graph=*/true);
  EXPECT_EQ(h.to_vector(), (std::vector<double>{2, 8, 6}));
  backward(sum(h));
  EXPECT_EQ(grad(y).to_vector(), (std::vector<double>{2, 4, 2}));
}

// derivatives.yaml multiplies by at::scalar_to_tensor(2): the recorded gradient is MulBackward0's.
TEST_F(CreateGraph, AScalarProductsDerivativeMultipliesByAZeroDimTensor) {
  Tensor x = leaf({0.25});
  Tensor g = autograd_grad(sum(exp(mul(x, Scalar::of(2.0)))), x, false, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "MulBackward0");
  EXPECT_NEAR(g.to_vector()[0], 2 * std::exp(0.5), 1e-6);
}

// AccumulateGrad under create_graph (accumulateGrad with grad mode on): the first gradient is copied into a new
// .grad (CopyBackwards, never stolen), later ones summed out of place (a new tensor, AddBackward0), so the old
// .grad keeps its value; without create_graph the sum is in place again, into the same tensor.
TEST_F(CreateGraph, LeafGradIsCopiedThenSummedOutOfPlace) {
  Tensor x = leaf({1, 2});
  Tensor s = sum(mul(x, x));
  backward(s, /*retain_graph=*/true, Tensor(), /*create_graph=*/true);
  const Tensor first = grad(x);
  EXPECT_EQ(grad_fn(first)->name(), "torch::autograd::CopyBackwards");
  EXPECT_EQ(first.to_vector(), (std::vector<double>{2, 4}));
  backward(s, true, Tensor(), true);
  const Tensor second = grad(x);
  EXPECT_FALSE(second.is_same(first));
  EXPECT_EQ(grad_fn(second)->name(), "AddBackward0");
  EXPECT_EQ(second.to_vector(), (std::vector<double>{4, 8}));
  EXPECT_EQ(first.to_vector(), (std::vector<double>{2, 4}));
  backward(s, false);
  EXPECT_TRUE(grad(x).is_same(second));
  EXPECT_EQ(second.to_vector(), (std::vector<double>{6, 12}));
}

// A leaf resized after its AccumulateGrad was made (an out= into it) still takes its gradient as the graph made
// it: obeys_layout_contract looks only at the gradient's dims of size > 1, so a [1, 1, 1, 1] gradient is stolen
// as it is, where a copy into the leaf's [3] would refuse the shapes.
TEST_F(ImplAutograd, ALeafResizedSinceItsGraphTakesTheGradientAsItIs) {
  Tensor x = full({1, 1, 1, 1}, Scalar::of(0.5), ScalarType::Float32, /*requires_grad=*/true);
  Tensor y = mul(x, Scalar::of(3.0));
  Tensor z = zeros({3}, ScalarType::Float32);
  eq_out(x, z, z);
  ASSERT_EQ(x.sizes(), (Dims{3}));
  backward(y, false);
  EXPECT_EQ(grad(x).sizes(), (Dims{1, 1, 1, 1}));
  EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{3}));
}

// A gradient of more dims than its leaf, whose rank shrank since the graph was made: LibTorch's contract reads the
// leaf's stale stride slots. An out= resized the leaf itself, so they hold its old strides, the gradient's, and
// the gradient is taken as it is; set_data brought a fresh tensor's slots (0), so it is copied into the leaf's
// shape, which refuses it. The 1.13.1 and 2.3.0 wheels do both.
TEST_F(ImplAutograd, AGradientOfMoreDimsThanItsLeafMeetsTheLeafsOldStrides) {
  Tensor x = full({1, 1, 1, 2}, Scalar::of(0.5), ScalarType::Float32, /*requires_grad=*/true);
  Tensor m = mean(x);
  Tensor z = zeros({1, 5}, ScalarType::Float32);
  eq_out(x, z, z);
  backward(m, false);
  EXPECT_EQ(grad(x).sizes(), (Dims{1, 1, 1, 2}));
  EXPECT_EQ(grad(x).strides(), (Dims{2, 2, 2, 1}));

  Tensor w = full({1, 1, 1, 2}, Scalar::of(0.5), ScalarType::Float32, /*requires_grad=*/true);
  Tensor n = mean(w);
  set_data(w, zeros({1, 5}, ScalarType::Float32));
  EXPECT_EQ(kind_of([&] { backward(n, false); }), ErrorKind::Shape);
  EXPECT_FALSE(grad(w).defined());
}

// A saved output comes back with its node as grad_fn: exp's derivative grad * result, recorded, has an edge to
// ExpBackward0 itself, so the second backward runs it again (d/dx e^x e^x... through the saved result), and
// reaches a freed node when the first backward did not retain the graph.
TEST_F(CreateGraph, ASavedOutputIsUnpackedWithItsNodeAsHistory) {
  Tensor x = leaf({0.5});
  Tensor g = autograd_grad(sum(exp(x)), x, /*retain_graph=*/true, false, /*create_graph=*/true);
  EXPECT_EQ(grad_fn(g)->name(), "MulBackward0");
  backward(g, /*retain_graph=*/true);
  EXPECT_NEAR(grad(x).to_vector()[0], std::exp(0.5), 1e-6);
  Tensor y = leaf({0.5});
  Tensor h = autograd_grad(sum(exp(y)), y, /*retain_graph=*/false, false, /*create_graph=*/true);
  EXPECT_EQ(kind_of([&] { backward(h); }), ErrorKind::GraphFreed);
}

}  // namespace
}  // namespace parity::impl
