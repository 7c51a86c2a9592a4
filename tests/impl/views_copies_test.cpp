// Unit tests of impl's diagonal/t/unfold, multi-output views, to/new_tensor/deepcopy and backward with a user
// gradient. Expected values are LibTorch 1.13's, observed with the probe.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "tests/support/impl_errors.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

using autograd::grad;
using autograd::grad_fn;
using autograd::NoGradGuard;
using V = std::vector<double>;

// The release these suites expect LibTorch's behaviour of (tests/support/impl_release.h).
class ImplBackwardGradient : public parity::testing::FollowsTorch113 {};
class ImplCopies : public parity::testing::FollowsTorch113 {};
class ImplDeepcopy : public parity::testing::FollowsTorch113 {};
class ImplViews : public parity::testing::FollowsTorch113 {};


// 0, 1, ... n-1 in a fresh contiguous tensor (not a view).
Tensor range(std::int64_t n, const Dims& sizes) { return clone(view(arange(n, ScalarType::Float32), sizes)); }
Tensor leaf(std::int64_t n, const Dims& sizes) { return requires_grad_(clone(range(n, sizes)), true); }

using testing::error_of;

std::string fn_name(const Tensor& t) {
  auto fn = grad_fn(t);
  return fn ? fn->name() : "-";
}

void expect_geometry(const Tensor& t, const Dims& sizes, const Dims& strides, std::int64_t offset) {
  EXPECT_EQ(t.sizes(), sizes);
  EXPECT_EQ(t.strides(), strides);
  EXPECT_EQ(t.offset(), offset);
}

const char* const kMultiSuffix =
    " This view is the output of a function that returns multiple views. Such functions do not allow the output "
    "views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
const char* const kNoGradSuffix =
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
    "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
    "tracked) or both outside (if you want the inplace to be tracked).";

TEST_F(ImplViews, DiagonalGeometry) {
  Tensor f = leaf(12, {3, 4});
  Tensor d = diagonal(f, 1, 0, 1);
  expect_geometry(d, {3}, {5}, 1);
  EXPECT_TRUE(autograd::is_view(d));
  EXPECT_EQ(fn_name(d), "DiagonalBackward0");
  expect_geometry(diagonal(f, -1, 0, 1), {2}, {5}, 4);
  // Off the matrix: empty, at the input's offset.
  for (std::int64_t off : Dims{4, 5, -3, -4, 100, -100, INT64_MAX, INT64_MIN}) expect_geometry(diagonal(f, off, 0, 1), {0}, {5}, 0);
  expect_geometry(diagonal(range(24, {2, 3, 4}), 1, 2, 0), {3, 1}, {4, 13}, 12);
  expect_geometry(diagonal(range(24, {2, 3, 4}), -1, 1, 2), {2, 2}, {12, 5}, 4);
  expect_geometry(diagonal(t(f), 1, 0, 1), {2}, {5}, 4);
  expect_geometry(diagonal(range(0, {0, 3}), 2, 0, 1), {0}, {4}, 0);
  Tensor plain = diagonal(range(12, {3, 4}), 0, 0, 1);
  EXPECT_TRUE(autograd::is_view(plain));
  EXPECT_EQ(fn_name(plain), "-");
}

TEST_F(ImplViews, DiagonalErrors) {
  Tensor f = range(12, {3, 4});
  EXPECT_EQ(error_of([&] { diagonal(f, 0, 0, 0); }),
            std::make_pair(ErrorKind::Argument, std::string("diagonal dimensions cannot be identical 0, 0")));
  EXPECT_EQ(error_of([&] { diagonal(f, 0, -2, 0); }).second, "diagonal dimensions cannot be identical -2, 0");
  EXPECT_EQ(error_of([&] { diagonal(f, 0, 0, 2); }),
            std::make_pair(ErrorKind::IndexRange,
                           std::string("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_EQ(error_of([&] { diagonal(from_values({1}, ScalarType::Float32), 0, 0, 1); }).second,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST_F(ImplViews, DiagonalBackwardScattersIntoZerosAtVersionZero) {
  Tensor x = leaf(12, {3, 4});
  backward(sum(mul(diagonal(x, 1, 0, 1), from_values({1, 2, 3}, ScalarType::Float32))));
  EXPECT_EQ(grad(x).to_vector(), (V{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3}));
  EXPECT_EQ(grad(x).strides(), (Dims{4, 1}));
  EXPECT_EQ(grad(x).version(), 0u);  // the backward function's result, stolen
  Tensor y = leaf(12, {3, 4});
  backward(sum(diagonal(y, 5, 0, 1)));
  EXPECT_EQ(grad(y).to_vector(), V(12, 0));
  // Through a transposed leaf the gradient is cloned to the leaf's strides (version 1, as in LibTorch).
  Tensor z = requires_grad_(t(range(12, {4, 3})), true);
  backward(sum(diagonal(z, 0, 0, 1)));
  EXPECT_EQ(grad(z).strides(), (Dims{1, 3}));
  EXPECT_EQ(grad(z).version(), 1u);
}

TEST_F(ImplViews, SliceAndSelectGradientsAreAtVersionZero) {
  Tensor x = leaf(12, {3, 4});
  backward(sum(slice(x, 1, 1, 3, 1)));
  EXPECT_EQ(grad(x).to_vector(), (V{0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(grad(x).version(), 0u);
  Tensor y = leaf(12, {3, 4});
  backward(sum(select(y, 1, 1)));
  EXPECT_EQ(grad(y).to_vector(), (V{0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(grad(y).version(), 0u);
}

TEST_F(ImplViews, TransposeOfAtMostTwoDims) {
  Tensor f = leaf(12, {3, 4});
  Tensor tf = t(f);
  expect_geometry(tf, {4, 3}, {1, 4}, 0);
  EXPECT_TRUE(autograd::is_view(tf));
  EXPECT_EQ(fn_name(tf), "TBackward0");
  expect_geometry(t(leaf(3, {3})), {3}, {1}, 0);
  Tensor s = t(leaf(1, {}));
  expect_geometry(s, {}, {}, 0);
  EXPECT_EQ(fn_name(s), "TBackward0");
  EXPECT_EQ(error_of([&] { t(range(24, {2, 3, 4})); }),
            std::make_pair(ErrorKind::Shape, std::string("t() expects a tensor with <= 2 dimensions, but self is 3D")));
  backward(sum(mul(tf, range(12, {4, 3}))));
  EXPECT_EQ(grad(f).to_vector(), (V{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  EXPECT_EQ(grad(f).strides(), (Dims{4, 1}));
}

TEST_F(ImplViews, UnfoldGeometry) {
  Tensor f = leaf(12, {3, 4});
  Tensor u = unfold(f, 1, 2, 1);
  expect_geometry(u, {3, 3, 2}, {4, 1, 1}, 0);
  EXPECT_TRUE(autograd::is_view(u));
  EXPECT_EQ(fn_name(u), "UnfoldBackward0");
  expect_geometry(unfold(f, 0, 2, 1), {2, 4, 2}, {4, 1, 4}, 0);
  expect_geometry(unfold(f, 1, 2, 3), {3, 1, 2}, {4, 3, 1}, 0);
  expect_geometry(unfold(f, 1, 4, 1), {3, 1, 4}, {4, 1, 1}, 0);
  expect_geometry(unfold(f, 1, 0, 1), {3, 5, 0}, {4, 1, 1}, 0);
  expect_geometry(unfold(f, -1, 2, 2), {3, 2, 2}, {4, 2, 1}, 0);
  expect_geometry(unfold(t(f), 0, 3, 1), {2, 3, 3}, {1, 4, 1}, 0);
  expect_geometry(unfold(range(0, {0, 3}), 0, 0, 1), {1, 3, 0}, {3, 1, 3}, 0);
  Tensor s = unfold(leaf(1, {}), 0, 1, 1);
  expect_geometry(s, {1}, {1}, 0);
  EXPECT_EQ(fn_name(s), "UnfoldBackward0");
  expect_geometry(unfold(range(1, {}), -1, 0, 1), {0}, {1}, 0);
  // step * stride wraps like LibTorch's int64 arithmetic; as_strided refuses a stride that wrapped negative.
  expect_geometry(unfold(f, 1, 2, INT64_MAX / 2 + 1), {3, 1, 2}, {4, INT64_MAX / 2 + 1, 1}, 0);
  expect_geometry(unfold(range(12, {4, 3}), 0, 2, INT64_MAX), {1, 3, 2}, {INT64_MAX - 2, 1, 3}, 0);
  EXPECT_EQ(error_of([&] { unfold(f, 0, 2, INT64_MAX); }),
            std::make_pair(ErrorKind::Argument,
                           std::string("as_strided: Negative strides are not supported at the moment, got strides: [-4, 1, 4]")));
}

TEST_F(ImplViews, UnfoldErrors) {
  Tensor f = range(12, {3, 4});
  EXPECT_EQ(error_of([&] { unfold(f, 1, 5, 1); }),
            std::make_pair(ErrorKind::Shape, std::string("maximum size for tensor at dimension 1 is 4 but size is 5")));
  EXPECT_EQ(error_of([&] { unfold(f, 1, 2, 0); }),
            std::make_pair(ErrorKind::Argument, std::string("step is 0 but must be > 0")));
  EXPECT_EQ(error_of([&] { unfold(f, 1, 2, -1); }).second, "step is -1 but must be > 0");
  EXPECT_EQ(error_of([&] { unfold(f, 1, -1, 1); }),
            std::make_pair(ErrorKind::Argument,
                           std::string("Storage size calculation overflowed with sizes=[3, 6, -1] and strides=[4, 1, 1]")));
  EXPECT_EQ(error_of([&] { unfold(f, 2, 2, 2); }).first, ErrorKind::IndexRange);
  Tensor s = range(1, {});
  EXPECT_EQ(error_of([&] { unfold(s, 0, 2, 1); }).second, "maximum size for tensor at dimension 0 is 1 but size is 2");
  EXPECT_EQ(error_of([&] { unfold(s, 0, 1, 0); }).second, "step is 0 but must be > 0");
  EXPECT_EQ(error_of([&] { unfold(s, 1, 1, 1); }).first, ErrorKind::IndexRange);
  EXPECT_EQ(error_of([&] { unfold(range(0, {0, 3}), 0, 1, 1); }).second,
            "maximum size for tensor at dimension 0 is 0 but size is 1");
}

TEST_F(ImplViews, UnfoldBackwardAddsOverlappingWindows) {
  Tensor x = leaf(6, {6});
  backward(sum(mul(unfold(x, 0, 3, 1), range(12, {4, 3}))));
  EXPECT_EQ(grad(x).to_vector(), (V{0, 4, 12, 21, 18, 11}));
  EXPECT_EQ(grad(x).version(), 0u);
  Tensor gap = leaf(6, {6});
  backward(sum(unfold(gap, 0, 2, 3)));
  EXPECT_EQ(grad(gap).to_vector(), (V{1, 1, 0, 1, 1, 0}));
  Tensor m = leaf(12, {3, 4});
  backward(sum(mul(unfold(m, 1, 2, 1), range(18, {3, 3, 2}))));
  EXPECT_EQ(grad(m).to_vector(), (V{0, 3, 7, 5, 6, 15, 19, 11, 12, 27, 31, 17}));
  Tensor s = leaf(1, {});
  backward(sum(unfold(s, 0, 1, 1)));
  EXPECT_EQ(grad(s).sizes(), (Dims{}));
  EXPECT_EQ(grad(s).to_vector(), (V{1}));
}

TEST_F(ImplViews, UnbindOutputsShareOneNode) {
  Tensor x = leaf(12, {4, 3});
  auto u = unbind(x, 0);
  ASSERT_EQ(u.size(), 4u);
  for (std::size_t i = 0; i < u.size(); ++i) {
    expect_geometry(u[i], {3}, {1}, static_cast<std::int64_t>(3 * i));
    EXPECT_TRUE(autograd::is_view(u[i]));
    EXPECT_EQ(fn_name(u[i]), "UnbindBackward0");
    EXPECT_EQ(autograd::output_nr(u[i]), i);
    EXPECT_EQ(grad_fn(u[i]), grad_fn(u[0]));
    EXPECT_EQ(u[i].storage().key(), x.storage().key());
  }
  auto c = unbind(x, -1);
  ASSERT_EQ(c.size(), 3u);
  expect_geometry(c[2], {4}, {3}, 2);
  EXPECT_TRUE(unbind(leaf(0, {0, 3}), 0).empty());
  EXPECT_EQ(error_of([&] { unbind(range(1, {}), 0); }),
            std::make_pair(ErrorKind::IndexRange, std::string("Dimension specified as 0 but tensor has no dimensions")));
  EXPECT_EQ(error_of([&] { unbind(range(1, {}), -1); }).second, "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(error_of([&] { unbind(x, 2); }).first, ErrorKind::IndexRange);
}

TEST_F(ImplViews, SplitAndChunkPieces) {
  Tensor x = leaf(12, {4, 3});
  auto s = split(x, 3, 0);
  ASSERT_EQ(s.size(), 2u);
  expect_geometry(s[0], {3, 3}, {3, 1}, 0);
  expect_geometry(s[1], {1, 3}, {3, 1}, 9);
  EXPECT_EQ(fn_name(s[1]), "SplitBackward0");
  EXPECT_EQ(autograd::output_nr(s[1]), 1u);
  auto s1 = split(x, 2, 1);
  expect_geometry(s1[1], {4, 1}, {3, 1}, 2);
  ASSERT_EQ(split(x, 10, 0).size(), 1u);
  ASSERT_EQ(split(x, INT64_MAX, 0).size(), 1u);
  auto e = split(range(0, {0, 3}), 0, 0);
  ASSERT_EQ(e.size(), 1u);
  expect_geometry(e[0], {0, 3}, {3, 1}, 0);
  EXPECT_EQ(split(range(0, {0, 3}), 2, 0).size(), 1u);

  auto c = chunk(x, 3, 0);  // ceil(4 / 3) = 2 rows a chunk: two chunks
  ASSERT_EQ(c.size(), 2u);
  expect_geometry(c[1], {2, 3}, {3, 1}, 6);
  EXPECT_EQ(fn_name(c[0]), "SplitBackward0");
  EXPECT_EQ(chunk(x, 10, 0).size(), 4u);
  EXPECT_EQ(chunk(x, 3, 1).size(), 3u);
  // An empty dim keeps the number of chunks (split_with_sizes).
  auto ce = chunk(leaf(0, {0, 3}), 2, 0);
  ASSERT_EQ(ce.size(), 2u);
  EXPECT_EQ(fn_name(ce[1]), "SplitWithSizesBackward0");
  EXPECT_EQ(autograd::output_nr(ce[1]), 1u);
  expect_geometry(ce[1], {0, 3}, {3, 1}, 0);
  auto cd = chunk(leaf(0, {3, 0}), 3, 1);
  ASSERT_EQ(cd.size(), 3u);
  expect_geometry(cd[2], {3, 0}, {1, 1}, 0);
  auto plain = chunk(range(4, {4}), 2, 0);
  EXPECT_TRUE(autograd::is_view(plain[1]));
  EXPECT_EQ(fn_name(plain[1]), "-");
}

TEST_F(ImplViews, SplitAndChunkErrors) {
  Tensor x = range(12, {4, 3});
  EXPECT_EQ(error_of([&] { split(x, 0, 0); }),
            std::make_pair(ErrorKind::Argument,
                           std::string("split_size can only be 0 if dimension size is 0, but got dimension size of 4")));
  EXPECT_EQ(error_of([&] { split(x, -1, 0); }),
            std::make_pair(ErrorKind::Argument, std::string("split expects split_size be non-negative, but got split_size=-1")));
  EXPECT_EQ(error_of([&] { split(range(1, {}), 1, 0); }),
            std::make_pair(ErrorKind::Shape, std::string("split expects at least a 1-dimensional tensor")));
  EXPECT_EQ(error_of([&] { split(x, 1, 3); }).first, ErrorKind::IndexRange);
  EXPECT_EQ(error_of([&] { chunk(x, 0, 0); }),
            std::make_pair(ErrorKind::Argument, std::string("chunk expects `chunks` to be greater than 0, got: 0")));
  EXPECT_EQ(error_of([&] { chunk(x, -1, 0); }).second, "chunk expects `chunks` to be greater than 0, got: -1");
  EXPECT_EQ(error_of([&] { chunk(range(1, {}), 1, 0); }),
            std::make_pair(ErrorKind::Shape, std::string("chunk expects at least a 1-dimensional tensor")));
  EXPECT_EQ(error_of([&] { chunk(x, 2, 5); }).first, ErrorKind::IndexRange);
  // LibTorch's ceil(n / chunks) wraps for a huge `chunks`, and split refuses what comes out.
  EXPECT_EQ(error_of([&] { chunk(x, INT64_MAX, 0); }).second,
            "split_size can only be 0 if dimension size is 0, but got dimension size of 4");
  EXPECT_EQ(error_of([&] { chunk(x, INT64_MAX - 1, 0); }).second,
            "split expects split_size be non-negative, but got split_size=-1");
  EXPECT_EQ(chunk(x, INT64_MAX / 2, 0).size(), 4u);
}

TEST_F(ImplViews, MultiOutputGradientsFillZerosForOutputsWithout) {
  Tensor a = leaf(12, {4, 3});
  auto u = unbind(a, 1);
  backward(sum(mul(u[1], Scalar::of(2))));
  EXPECT_EQ(grad(a).to_vector(), (V{0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0}));
  EXPECT_EQ(grad(a).version(), 0u);
  Tensor b = leaf(12, {4, 3});
  backward(sum(mul(split(b, 3, 0)[1], Scalar::of(3))));
  EXPECT_EQ(grad(b).to_vector(), (V{0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3}));
  Tensor c = leaf(12, {4, 3});
  backward(sum(mul(chunk(c, 2, 1)[0], Scalar::of(3))));
  EXPECT_EQ(grad(c).to_vector(), (V{3, 3, 0, 3, 3, 0, 3, 3, 0, 3, 3, 0}));
  Tensor d = leaf(12, {4, 3});
  auto u2 = unbind(d, 0);
  backward(sum(add(add(u2[0], mul(u2[3], Scalar::of(2))), u2[0])));
  EXPECT_EQ(grad(d).to_vector(), (V{2, 2, 2, 0, 0, 0, 0, 0, 0, 2, 2, 2}));
  Tensor e = leaf(0, {0, 3});
  backward(sum(chunk(e, 2, 0)[1]));
  EXPECT_EQ(grad(e).sizes(), (Dims{0, 3}));
  // retain_grad on one output.
  Tensor f = leaf(12, {4, 3});
  auto u3 = unbind(f, 0);
  retain_grad(u3[1]);
  backward(sum(mul(u3[1], Scalar::of(2))));
  EXPECT_EQ(grad(u3[1]).to_vector(), (V{2, 2, 2}));
}

TEST_F(ImplViews, MultiOutputViewsRefuseInPlaceWithGrad) {
  Tensor x = leaf(12, {4, 3});
  auto u = unbind(x, 0);
  EXPECT_EQ(error_of([&] { add_(u[1], Scalar::of(1)); }),
            std::make_pair(ErrorKind::ViewInPlace,
                           "Output 1 of UnbindBackward0 is a view and is being modified inplace." + std::string(kMultiSuffix)));
  Tensor y = mul(x, Scalar::of(2));
  EXPECT_EQ(error_of([&] { mul_(split(y, 2, 0)[1], Scalar::of(2)); }).second,
            "Output 1 of SplitBackward0 is a view and is being modified inplace." + std::string(kMultiSuffix));
  EXPECT_EQ(error_of([&] { mul_(chunk(mul(leaf(0, {0, 3}), Scalar::of(2)), 2, 0)[1], Scalar::of(2)); }).second,
            "Output 1 of SplitWithSizesBackward0 is a view and is being modified inplace." + std::string(kMultiSuffix));
  // A Default view of an output inherits the restriction; a no_grad one replaces it, and the reverse.
  auto uy = unbind(y, 0);
  EXPECT_EQ(error_of([&] { mul_(view(uy[2], {3}), Scalar::of(2)); }).second,
            "Output 0 of ViewBackward0 is a view and is being modified inplace." + std::string(kMultiSuffix));
  Tensor nv;
  {
    NoGradGuard g;
    nv = view(uy[2], {3});
  }
  EXPECT_EQ(error_of([&] { mul_(nv, Scalar::of(2)); }).second,
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled." +
                std::string(kNoGradSuffix));
  Tensor flat;
  {
    NoGradGuard g;
    flat = view(y, {12});
  }
  EXPECT_EQ(error_of([&] { mul_(unbind(flat, 0)[2], Scalar::of(2)); }).second,
            "Output 2 of UnbindBackward0 is a view and is being modified inplace." + std::string(kMultiSuffix));
  // Outputs made under no_grad are no_grad views.
  std::vector<Tensor> ng;
  {
    NoGradGuard g;
    ng = unbind(y, 0);
  }
  EXPECT_TRUE(autograd::requires_grad(ng[1]));  // through the base
  EXPECT_TRUE(autograd::is_leaf(ng[1]));
  EXPECT_EQ(error_of([&] { mul_(ng[1], Scalar::of(2)); }).second,
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled." +
                std::string(kNoGradSuffix));
  // Outputs of a base that does not require grad have no node; writing a gradient-requiring value raises.
  Tensor plain = range(12, {4, 3});
  auto up = unbind(plain, 0);
  mul_(up[1], Scalar::of(2));  // nothing requires grad: allowed
  EXPECT_EQ(up[1].version(), 1u);
  EXPECT_EQ(error_of([&] { mul_(up[1], select(x, 0, 0)); }).second,
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled." +
                std::string(kMultiSuffix));
}

TEST_F(ImplViews, MultiOutputViewsWrittenUnderNoGrad) {
  Tensor x = leaf(12, {4, 3});
  Tensor y = mul(x, Scalar::of(2));
  auto u = unbind(y, 0);
  {
    NoGradGuard g;
    mul_(u[1], Scalar::of(2));
  }
  EXPECT_EQ(y.to_vector()[3], 12.0);
  EXPECT_EQ(fn_name(y), "MulBackward1");
  // Every output's history is now ambiguous: reading grad_fn raises, requires_grad and is_leaf do not.
  for (int i : {1, 0})
    EXPECT_EQ(error_of([&] { grad_fn(u[i]); }),
              std::make_pair(ErrorKind::ViewInPlace,
                             "Output " + std::to_string(i) +
                                 " of UnbindBackward0 is a view and its base or another view of its base has been "
                                 "modified inplace." + kMultiSuffix));
  EXPECT_TRUE(autograd::requires_grad(u[1]));
  EXPECT_FALSE(autograd::is_leaf(u[1]));
  EXPECT_EQ(autograd::output_nr(u[1]), 1u);
  EXPECT_EQ(error_of([&] { mul(u[2], Scalar::of(2)); }).first, ErrorKind::ViewInPlace);  // ops read the history
}

TEST_F(ImplViews, GradFnOfMultiOutputViewAfterItsBaseChanged) {
  Tensor x = leaf(12, {4, 3});
  Tensor y = mul(x, Scalar::of(2));
  auto u = unbind(y, 0);
  mul_(y, Scalar::of(2));
  EXPECT_EQ(error_of([&] { grad_fn(u[3]); }).second,
            "Output 3 of UnbindBackward0 is a view and its base or another view of its base has been modified "
            "inplace." + std::string(kMultiSuffix));
  // A leaf base changed under no_grad.
  Tensor z = leaf(6, {3, 2});
  auto uz = unbind(z, 0);
  {
    NoGradGuard g;
    mul_(z, Scalar::of(2));
  }
  EXPECT_EQ(error_of([&] { grad_fn(uz[1]); }).first, ErrorKind::ViewInPlace);
  // A base that did not require grad: nothing to regenerate until it does.
  Tensor p = range(12, {4, 3});
  auto up = unbind(p, 0);
  mul_(p, Scalar::of(2));
  EXPECT_EQ(fn_name(up[1]), "-");
  Tensor q = range(12, {4, 3});
  auto uq = unbind(q, 0);
  mul_(q, x);
  EXPECT_TRUE(autograd::requires_grad(uq[1]));
  EXPECT_EQ(error_of([&] { grad_fn(uq[1]); }).second,
            "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
            "with grad mode enabled." + std::string(kMultiSuffix));
  // Default views regenerate their history instead.
  Tensor r = range(12, {4, 3});
  Tensor v = select(r, 0, 1);
  mul_(r, x);
  EXPECT_EQ(fn_name(v), "AsStridedBackward0");
  // A no_grad view whose base changed with grad mode on raises the no_grad message.
  Tensor w = mul(x, Scalar::of(2));
  Tensor nv;
  {
    NoGradGuard g;
    nv = select(w, 0, 1);
  }
  mul_(w, Scalar::of(2));
  EXPECT_EQ(error_of([&] { grad_fn(nv); }).second,
            "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
            "with grad mode enabled." + std::string(kNoGradSuffix));
}

TEST_F(ImplViews, ViewIdentity) {
  Tensor r = range(3, {3});
  Tensor e = select(r, 0, 0);
  EXPECT_TRUE(autograd::is_view(e));  // views of tensors that do not require grad are views too
  Tensor v = t(leaf(12, {3, 4}));
  Tensor d = detach(v);
  EXPECT_FALSE(autograd::is_view(d));
  EXPECT_FALSE(autograd::requires_grad(d));
  EXPECT_TRUE(d.version_counter().shares_with(v.version_counter()));
  EXPECT_EQ(d.strides(), (Dims{1, 4}));
  add_(d, Scalar::of(1));
  EXPECT_EQ(v.version(), 1u);
  Tensor data = variable_data(v);
  EXPECT_FALSE(autograd::is_view(data));
  EXPECT_EQ(data.storage().key(), v.storage().key());
  EXPECT_EQ(data.strides(), (Dims{1, 4}));
  EXPECT_FALSE(data.version_counter().shares_with(v.version_counter()));
  add_(data, Scalar::of(1));
  EXPECT_EQ(v.version(), 1u);
  EXPECT_EQ(data.version(), 1u);
}

TEST_F(ImplCopies, ToReturnsSelfOrACopyInPreserveFormat) {
  Tensor f = leaf(12, {3, 4});
  EXPECT_TRUE(to(f, ScalarType::Float32).is_same(f));
  Tensor c = to(f, ScalarType::Float32, true);
  EXPECT_FALSE(c.is_same(f));
  EXPECT_NE(c.storage().key(), f.storage().key());
  EXPECT_EQ(fn_name(c), "ToCopyBackward0");
  EXPECT_FALSE(autograd::is_view(c));
  EXPECT_EQ(fn_name(to(f, ScalarType::Float64)), "ToCopyBackward0");
  Tensor l = to(f, ScalarType::Int64);
  EXPECT_FALSE(autograd::requires_grad(l));
  EXPECT_EQ(fn_name(l), "-");
  EXPECT_FALSE(autograd::requires_grad(to(f, ScalarType::Bool)));
  {
    NoGradGuard g;
    EXPECT_FALSE(autograd::requires_grad(to(f, ScalarType::Float64)));
  }
  EXPECT_FALSE(autograd::requires_grad(to(arange(3, ScalarType::Int64), ScalarType::Float32)));
  // Strides: kept when dense (size-1 dims' strides too), dense in the input's dim order otherwise.
  EXPECT_EQ(to(t(f), ScalarType::Float32, true).strides(), (Dims{1, 4}));
  EXPECT_EQ(to(expand(range(3, {3, 1}), {3, 4}), ScalarType::Float32, true).strides(), (Dims{4, 1}));
  EXPECT_EQ(to(slice(range(24, {4, 6}), 1, 0, 6, 2), ScalarType::Float32, true).strides(), (Dims{3, 1}));
  EXPECT_EQ(to(t(slice(range(24, {4, 6}), 1, 0, 6, 2)), ScalarType::Float64, true).strides(), (Dims{1, 3}));
  EXPECT_EQ(to(as_strided(range(3, {1, 3}), {1, 3}, {0, 1}, 0), ScalarType::Float32, true).strides(), (Dims{0, 1}));
  Tensor p = to(slice(permute(range(24, {2, 3, 4}), {2, 0, 1}), 0, 0, 4, 2), ScalarType::Float32, true);
  expect_geometry(p, {2, 2, 3}, {1, 6, 2}, 0);
  Tensor o = to(select(range(24, {4, 6}), 0, 1), ScalarType::Float32, true);
  expect_geometry(o, {6}, {1}, 0);
  EXPECT_EQ(o.to_vector(), (V{6, 7, 8, 9, 10, 11}));
}

TEST_F(ImplCopies, ToCopyGradient) {
  Tensor x = leaf(12, {4, 3});
  backward(sum(to(x, ScalarType::Float64)));
  EXPECT_EQ(grad(x).dtype(), ScalarType::Float32);
  EXPECT_EQ(grad(x).version(), 0u);
  Tensor y = leaf(12, {4, 3});
  backward(sum(to(y, ScalarType::Float32, true)));
  EXPECT_EQ(grad(y).to_vector(), V(12, 1));
  EXPECT_EQ(grad(y).version(), 1u);  // the expanded gradient, cloned
}

TEST_F(ImplCopies, NewTensorIsADetachedCopy) {
  Tensor v = t(leaf(12, {3, 4}));
  Tensor n = new_tensor(v);
  EXPECT_FALSE(autograd::requires_grad(n));
  EXPECT_EQ(fn_name(n), "-");
  EXPECT_FALSE(autograd::is_view(n));
  EXPECT_NE(n.storage().key(), v.storage().key());
  EXPECT_EQ(n.version(), 0u);
  EXPECT_EQ(n.strides(), (Dims{1, 4}));
  EXPECT_EQ(n.to_vector(), v.to_vector());
  EXPECT_EQ(new_tensor(expand(range(3, {3, 1}), {3, 4})).strides(), (Dims{4, 1}));
  Tensor i = new_tensor(view(arange(6, ScalarType::Int64), {2, 3}));
  EXPECT_EQ(i.dtype(), ScalarType::Int64);
  EXPECT_FALSE(autograd::requires_grad(new_tensor(mul(v, Scalar::of(2)))));
}

// copy_ returns early only for the tensor itself; another tensor over the same elements is copied through the
// iterator's checks: a destination whose elements overlap is refused, a same-geometry source is allowed.
TEST_F(ImplCopies, CopyOntoTheSameElementsOfAnotherTensor) {
  Tensor e = expand(range(3, {3, 1}), {3, 4});  // strides [1, 0]
  copy_(e, e);
  Tensor again = expand(e, {3, 4});
  try {
    copy_(again, e);
    ADD_FAILURE() << "copy_ into an overlapping destination did not raise";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Overlap);
  }
  Tensor x = range(6, {2, 3});
  copy_(permute(x, {0, 1}), x);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

// split/chunk/unbind's backward is cat/stack, whose result takes the memory format the gradients suggest: a
// channels_last gradient of a channels_last leaf stays channels_last (size-1 dims' strides included) when
// AccumulateGrad steals it; with an undefined (zero) gradient among them, it is contiguous.
TEST_F(ImplViews, MultiOutputBackwardKeepsTheGradientsMemoryFormat) {
  Tensor x = requires_grad_(fill_(empty_strided({1, 1, 1, 2}, {2, 1, 2, 1}, ScalarType::Float32), Scalar::of(1)), true);
  Tensor piece = chunk(x, 3, 2).at(0);
  Tensor g = fill_(empty_strided({1, 1, 1, 2}, {2, 1, 2, 1}, ScalarType::Float32), Scalar::of(2));
  backward(piece, false, g);
  EXPECT_EQ(autograd::grad(x).strides(), (Dims{2, 1, 2, 1}));

  Tensor y = requires_grad_(fill_(empty_strided({2, 1, 1, 2}, {2, 1, 2, 1}, ScalarType::Float32), Scalar::of(1)), true);
  Tensor first = chunk(y, 2, 0).at(0);
  backward(first, false, fill_(empty_strided({1, 1, 1, 2}, {2, 1, 2, 1}, ScalarType::Float32), Scalar::of(2)));
  EXPECT_EQ(autograd::grad(y).strides(), (Dims{2, 2, 2, 1}));  // the other chunk's zeros are contiguous

  // unbind's stack inside the gradients' rank is a cat along that dim viewed with the new dim: the channels_last
  // cat [1, 2, 2, 1] viewed as [1, 2, 2, 1, 1] gets view's strides for the size-1 dims (LibTorch 1.13).
  Tensor z = requires_grad_(fill_(empty_strided({1, 2, 2, 1, 1}, {4, 1, 2, 2, 2}, ScalarType::Float32), Scalar::of(1)), true);
  Tensor slice0 = unbind(z, 3).at(0);
  backward(slice0, false, detach(slice0));
  EXPECT_EQ(autograd::grad(z).strides(), (Dims{2, 1, 2, 2, 2}));
}

TEST_F(ImplDeepcopy, KeepsGeometryAndSharingWithinOneMemo) {
  DeepcopyMemo memo;
  Tensor base = arange(12, ScalarType::Float32);
  Tensor a = t(view(base, {3, 4}));
  Tensor b = slice(base, 0, 2, 8, 2);
  Tensor ca = deepcopy(a, memo);
  Tensor cb = deepcopy(b, memo);
  expect_geometry(ca, {4, 3}, {1, 4}, 0);
  expect_geometry(cb, {3}, {2}, 2);
  EXPECT_EQ(ca.storage().key(), cb.storage().key());
  EXPECT_NE(ca.storage().key(), a.storage().key());
  EXPECT_EQ(ca.storage().nbytes(), 48u);
  EXPECT_EQ(ca.to_vector(), a.to_vector());
  EXPECT_EQ(cb.to_vector(), (V{2, 4, 6}));
  // set_ bumped each copy once; each has its own counter; neither is a view; the original is untouched.
  EXPECT_EQ(ca.version(), 1u);
  EXPECT_EQ(cb.version(), 1u);
  EXPECT_FALSE(ca.version_counter().shares_with(cb.version_counter()));
  EXPECT_FALSE(autograd::is_view(ca));
  EXPECT_TRUE(autograd::is_leaf(ca));
  EXPECT_EQ(base.version(), 0u);
  EXPECT_TRUE(deepcopy(a, memo).is_same(ca));
  DeepcopyMemo other;
  EXPECT_NE(deepcopy(a, other).storage().key(), ca.storage().key());
}

TEST_F(ImplDeepcopy, RequiresGradAndGrad) {
  DeepcopyMemo memo;
  Tensor l = leaf(6, {2, 3});
  backward(sum(mul(l, Scalar::of(2))));
  Tensor cl = deepcopy(l, memo);
  EXPECT_TRUE(autograd::requires_grad(cl));
  EXPECT_TRUE(autograd::is_leaf(cl));
  EXPECT_EQ(fn_name(cl), "-");
  EXPECT_EQ(cl.version(), 1u);
  ASSERT_TRUE(grad(cl).defined());
  EXPECT_NE(grad(cl).storage().key(), grad(l).storage().key());
  EXPECT_EQ(grad(cl).to_vector(), (V{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(grad(cl).version(), 1u);
  EXPECT_FALSE(autograd::requires_grad(grad(cl)));
  EXPECT_EQ(error_of([&] { deepcopy(mul(l, Scalar::of(2)), memo); }),
            std::make_pair(ErrorKind::DeepcopyNonLeaf,
                           std::string("Only Tensors created explicitly by the user (graph leaves) support the "
                                       "deepcopy protocol at the moment")));
  EXPECT_EQ(error_of([&] { deepcopy(select(l, 0, 0), memo); }).first, ErrorKind::DeepcopyNonLeaf);
  // A no_grad view of a leaf requiring grad is a leaf requiring grad; its copy is no view.
  Tensor nv;
  {
    NoGradGuard g;
    nv = select(l, 0, 1);
  }
  Tensor cnv = deepcopy(nv, memo);
  EXPECT_TRUE(autograd::requires_grad(cnv));
  EXPECT_FALSE(autograd::is_view(cnv));
  expect_geometry(cnv, {3}, {1}, 3);
  // A .grad sharing storage with a tensor copied with the same memo shares the copy.
  Tensor g = leaf(6, {2, 3});
  Tensor shared = range(6, {2, 3});
  autograd::materialize(g).grad = shared;
  Tensor cs = deepcopy(shared, memo);
  Tensor cg = deepcopy(g, memo);
  EXPECT_TRUE(grad(cg).is_same(cs));
  // The memo is keyed by identity, so the originals stay alive while it is in use (as Python's memo keeps them).
  Tensor ints = arange(4, ScalarType::Int64);
  Tensor none = empty({0}, ScalarType::Float32);
  EXPECT_EQ(deepcopy(ints, memo).version(), 1u);
  EXPECT_EQ(deepcopy(none, memo).sizes(), (Dims{0}));
  EXPECT_EQ(deepcopy(none, memo).storage().nbytes(), 0u);
}

TEST_F(ImplBackwardGradient, GradientShapeIsSummedOrRefused) {
  Tensor x = leaf(3, {3});
  Tensor y = mul(x, Scalar::of(2));
  backward(y, true, ones({2, 3}, ScalarType::Float32));
  EXPECT_EQ(grad(x).to_vector(), (V{4, 4, 4}));
  backward(y, true, ones({1, 3}, ScalarType::Float32));
  EXPECT_EQ(grad(x).to_vector(), (V{6, 6, 6}));
  for (const Dims& bad : {Dims{2}, Dims{1}, Dims{}, Dims{3, 1}, Dims{4, 1}})
    EXPECT_EQ(error_of([&] { backward(y, true, ones(bad, ScalarType::Float32)); }),
              std::make_pair(ErrorKind::Shape, "invalid gradient at index 0 - got " + format_dims(bad) +
                                                   " but expected shape compatible with [3]"));
  Tensor w = leaf(1, {1});
  backward(mul(w, Scalar::of(2)), false, ones({2, 3}, ScalarType::Float32));
  EXPECT_EQ(grad(w).to_vector(), (V{12}));
  Tensor s = leaf(1, {});
  backward(mul(s, Scalar::of(2)), false, ones({3}, ScalarType::Float32));
  EXPECT_EQ(grad(s).sizes(), (Dims{}));
  EXPECT_EQ(grad(s).to_vector(), (V{6}));
  EXPECT_EQ(error_of([&] { backward(range(3, {3}), false, ones({3}, ScalarType::Float32)); }).first, ErrorKind::NoGradFn);
}

TEST_F(ImplBackwardGradient, GradientDtypeIsConverted) {
  for (ScalarType dtype : {ScalarType::Float64, ScalarType::Int64, ScalarType::Bool}) {
    Tensor x = leaf(3, {3});
    backward(mul(x, Scalar::of(2)), false, ones({3}, dtype));
    EXPECT_EQ(grad(x).dtype(), ScalarType::Float32);
    EXPECT_EQ(grad(x).to_vector(), (V{2, 2, 2}));
    EXPECT_EQ(grad(x).version(), 0u);  // MulBackward's fresh result, stolen
  }
  Tensor z = leaf(3, {3});
  backward(z, false, ones({3}, ScalarType::Float64));
  EXPECT_EQ(grad(z).dtype(), ScalarType::Float32);
  EXPECT_EQ(grad(z).version(), 1u);  // the converted root gradient is still referenced: cloned, not stolen
}

TEST_F(ImplBackwardGradient, LeafGradNeverAliasesTheCallersGradient) {
  Tensor z = leaf(3, {3});
  Tensor g = ones({3}, ScalarType::Float32);
  backward(z, false, g);
  EXPECT_NE(grad(z).storage().key(), g.storage().key());
  EXPECT_EQ(grad(z).version(), 1u);  // cloned into the leaf's layout (copy_)
  Tensor z2 = leaf(3, {3});
  backward(z2, false, ones({3}, ScalarType::Float32));  // a temporary is still the caller's
  EXPECT_EQ(grad(z2).version(), 1u);
  Tensor z3 = leaf(3, {3});
  backward(z3, false, ones({2, 3}, ScalarType::Float32));
  EXPECT_EQ(grad(z3).to_vector(), (V{2, 2, 2}));
  EXPECT_EQ(grad(z3).version(), 1u);
  Tensor z4 = leaf(3, {3});
  Tensor g4 = requires_grad_(ones({3}, ScalarType::Float32), true);
  backward(z4, false, g4);
  EXPECT_FALSE(autograd::requires_grad(grad(z4)));
  EXPECT_NE(grad(z4).storage().key(), g4.storage().key());
  Tensor z5 = leaf(3, {3});
  Tensor g5 = requires_grad_(ones({3}, ScalarType::Float32), true);
  backward(mul(z5, Scalar::of(1)), false, g5);
  EXPECT_FALSE(autograd::requires_grad(grad(z5)));
  // A transposed gradient reaches the leaf in the leaf's layout.
  Tensor z6 = leaf(6, {2, 3});
  backward(mul(z6, Scalar::of(1)), false, t(ones({3, 2}, ScalarType::Float32)));
  EXPECT_EQ(grad(z6).strides(), (Dims{3, 1}));
  EXPECT_EQ(grad(z6).version(), 1u);
}

}  // namespace
}  // namespace parity::impl
