// Unit tests of impl's advanced indexing (index, index_put_) against behaviour observed on LibTorch 1.13: values,
// layouts, gradients and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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
class ImplIndexing : public parity::testing::FollowsTorch113 {};

// aten::index with an int64 index (dim 0) and a bool mask (the dims it covers): values, TensorIterator's layout
// of the result, IndexBackward0 (accumulating duplicates, its gradient at version 1, the index saved), errors.
TEST_F(ImplIndexing, IndexValuesLayoutGradientAndErrors) {
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
TEST_F(ImplIndexing, IndexPutWritesAccumulatesAndChecks) {
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

}  // namespace
}  // namespace parity::impl
