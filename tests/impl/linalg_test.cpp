// Unit tests of impl's matrix products (mm, matmul) against behaviour observed on LibTorch 1.13: values, dtypes,
// strides, graphs, saved tensors, versions and error kinds.
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
class ImplLinalg : public parity::testing::FollowsTorch113 {};

// ---------------------------------------------------------------------------------------------------------
// mm

TEST_F(ImplLinalg, MmValuesLayoutAndDtype) {
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

TEST_F(ImplLinalg, MmErrors) {
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

TEST_F(ImplLinalg, MmGradientsAndEmptyOperands) {
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

TEST_F(ImplLinalg, MmSavesEachOperandOnlyWhenTheOtherNeedsGrad) {
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

TEST_F(ImplLinalg, MatmulComposesTheGraphOfLibTorch113) {
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

TEST_F(ImplLinalg, MatmulShapesStridesAndVersions) {
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

TEST_F(ImplLinalg, MatmulValuesMatchMmPerBatch) {
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

TEST_F(ImplLinalg, MatmulGradients) {
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

TEST_F(ImplLinalg, MatmulSavedOperands) {
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

TEST_F(ImplLinalg, AVersionErrorNamesTheOperandItsNodeUnpacksFirst) {
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

TEST_F(ImplLinalg, MatmulErrors) {
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

TEST_F(ImplLinalg, NoGradModeRecordsNothingButStillBumpsTheSqueezedVersion) {
  Tensor a = seq({4}, true), b = seq({4, 3}, true);
  autograd::NoGradGuard no_grad;
  Tensor r = matmul(a, b);
  EXPECT_FALSE(grad_fn(r));
  EXPECT_EQ(r.version(), 1u);
  EXPECT_FALSE(grad_fn(matmul(seq({3, 4}, true), seq({2, 4, 5}, true))));
}

}  // namespace
}  // namespace parity::impl
