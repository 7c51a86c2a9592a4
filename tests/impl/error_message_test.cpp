// impl raises LibTorch's error messages word for word: each program ends in a step that raises on both backends,
// and the two messages must be equal (LibTorch's C++ spelling: CPUFloatType, not Python's torch.FloatTensor).
// The programs are the cases where impl once said something else.
#include <gtest/gtest.h>

#include <string>

#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/op_table.h"
#include "program/program_builder.h"

namespace parity {
namespace {

using program::OpId;
using judge::StepObs;

// Runs the program on both backends and compares the last step's error, which both must raise.
void expect_same_error(const program::ProgramBuilder& b) {
  const program::Program& p = b.program();
  auto impl = impl_backend::make_impl_backend();
  auto torch = oracle::make_torch_backend();
  const judge::Trace ti = judge::run(*impl, p), to = judge::run(*torch, p);
  ASSERT_EQ(ti.steps.size(), p.steps.size());
  ASSERT_EQ(to.steps.size(), p.steps.size());
  const StepObs& i = ti.steps.back();
  const StepObs& o = to.steps.back();
  ASSERT_EQ(o.status, StepObs::Status::Error) << "LibTorch did not raise";
  ASSERT_EQ(i.status, StepObs::Status::Error) << "impl did not raise; LibTorch said: " << o.message;
  EXPECT_EQ(i.category, o.category);
  EXPECT_EQ(i.message, o.message);
  // And as the same C++ class, which Python shows as the exception's type.
  ASSERT_TRUE(o.exception && i.exception) << "a side named no exception class";
  EXPECT_EQ(judge::to_string(*i.exception), judge::to_string(*o.exception));
}

int unfold(program::ProgramBuilder& b, int x, std::int64_t dim, std::int64_t size) {
  program::Attrs a;
  a.dim = dim;
  a.size = size;
  return b.step(OpId::Unfold, {x}, a);
}

TEST(ErrorMessage, PermuteWithTooFewDims) {
  program::ProgramBuilder b;
  const int x = b.rand({2});
  program::Attrs a;
  a.dims = {0, 1};
  b.step(OpId::Permute, {x}, a);
  expect_same_error(b);
}

TEST(ErrorMessage, PermuteWithARepeatedDim) {
  program::ProgramBuilder b;
  const int x = b.rand({2, 3});
  program::Attrs a;
  a.dims = {1, -1};
  b.step(OpId::Permute, {x}, a);
  expect_same_error(b);
}

// The tensor's type as LibTorch's C++ API prints it.
TEST(ErrorMessage, ExpandToFewerDimsNamesTheCppType) {
  program::ProgramBuilder b;
  const int x = b.rand({4, 1}, program::DType::Float64);
  b.with_sizes(OpId::Expand, x, {1});
  expect_same_error(b);
}

// LibTorch 1.13 lets expand's negative size through and then refuses to count the elements.
TEST(ErrorMessage, ExpandToANegativeSizeOverflowsTheElementCount) {
  program::ProgramBuilder b;
  const int x = b.rand({3, 1});
  b.with_sizes(OpId::Expand, x, {-2, 3, 1});
  expect_same_error(b);
}

// unfold is an as_strided: a negative window overflows the storage size where its stride is not 0...
TEST(ErrorMessage, UnfoldToANegativeWindowOverflowsTheStorageSize) {
  program::ProgramBuilder b;
  const int x = b.step(OpId::Zeros, {}, [] {
    program::Attrs a;
    a.dtype = program::DType::Bool;
    return a;
  }());
  unfold(b, x, 0, -2);
  expect_same_error(b);
}

// ... and where it is 0, the storage bound is what refuses it.
TEST(ErrorMessage, UnfoldToANegativeWindowOverAnEmptyDimIsOutOfBounds) {
  program::ProgramBuilder b;
  const int x = b.rand_strided({2, 0}, {2, 0}, 0);
  unfold(b, x, 1, -1);
  expect_same_error(b);
}

// A saved input names the grad_fn it has when backward finds it modified (here mul_'s), not the one it had
// when it was saved (mean's).
TEST(ErrorMessage, AModifiedSavedInputNamesItsCurrentGradFn) {
  program::ProgramBuilder b;
  const int leaf = b.rand({3}, program::DType::Float32, /*requires_grad=*/true);
  const int m = b.unary(OpId::Mean, leaf);
  const int w = b.rand({}, program::DType::Float32, /*requires_grad=*/true);
  const int y = b.binary(OpId::Mul, m, w);  // saves m
  b.binary(OpId::Mul_, m, w);               // m's grad_fn becomes MulBackward0
  b.backward(y);
  expect_same_error(b);
}

// A saved output has no grad_fn of its own in the saved data: the node that saved it is named.
TEST(ErrorMessage, AModifiedSavedOutputNamesTheNodeThatSavedIt) {
  program::ProgramBuilder b;
  const int leaf = b.rand({3}, program::DType::Float32, /*requires_grad=*/true);
  const int e = b.unary(OpId::Exp, leaf);  // ExpBackward0 saves its result
  b.scalar(OpId::MulScalar_, e, 2.0);
  const int s = b.unary(OpId::Sum, e);
  b.backward(s);
  expect_same_error(b);
}

// A saved leaf that is modified in place (under no_grad) is named by no node at all.
TEST(ErrorMessage, AModifiedSavedLeafNamesNoNode) {
  program::ProgramBuilder b;
  const int leaf = b.rand({3}, program::DType::Float32, /*requires_grad=*/true);
  const int w = b.rand({3}, program::DType::Float32, /*requires_grad=*/true);
  const int y = b.binary(OpId::Mul, leaf, w);  // saves both leaves
  b.scalar(OpId::AddScalar_, w, 1.0, /*grad_enabled=*/false);
  const int s = b.unary(OpId::Sum, y);
  b.backward(s);
  expect_same_error(b);
}

// When both operands of mul (or div) were modified, LibTorch's node unpacks self first, so the error is self's.
TEST(ErrorMessage, BothSavedOperandsModifiedReportsSelf) {
  for (OpId op : {OpId::Mul, OpId::Div}) {
    SCOPED_TRACE(std::string(program::spec(op).name));
    program::ProgramBuilder b;
    const int a = b.scalar(OpId::MulScalar, b.rand({3}, program::DType::Float32, true), 2.0);  // MulBackward1
    const int c = b.scalar(OpId::AddScalar, b.rand({3}, program::DType::Float32, true), 2.0);  // AddBackward1
    const int y = b.binary(op, a, c);
    b.scalar(OpId::AddScalar_, a, 1.0, /*grad_enabled=*/false);
    b.scalar(OpId::AddScalar_, c, 1.0, /*grad_enabled=*/false);
    b.backward(b.unary(OpId::Sum, y));
    expect_same_error(b);
  }
}

// The checks that throw another class than c10::Error, one of each: a dim out of range (TORCH_CHECK_INDEX), a
// view's size inference (std::runtime_error in 1.13, a TORCH_CHECK since), neg of a bool tensor (a TORCH_CHECK
// in 1.13, TORCH_CHECK_NOT_IMPLEMENTED since), a fill value past float16's range (c10's std::runtime_error), a
// second backward through CopySlices (std::runtime_error in 1.13) and a leaf that gained a grad_fn after its graph
// was made (AccumulateGrad's std::logic_error in 1.13).
TEST(ErrorMessage, EachClassOfException) {
  {
    program::ProgramBuilder b;
    b.with_dims(OpId::Transpose, b.rand({2, 3}), 5);
    expect_same_error(b);
  }
  {
    program::ProgramBuilder b;
    b.with_sizes(OpId::View, b.rand({2, 3}), {4});
    expect_same_error(b);
  }
  {
    program::ProgramBuilder b;
    b.unary(OpId::Neg, b.rand({2}, program::DType::Bool));
    expect_same_error(b);
  }
  {
    program::ProgramBuilder b;
    b.scalar(OpId::Fill_, b.rand({2}, program::DType::Float16), 1e6);
    expect_same_error(b);
  }
  {
    program::ProgramBuilder b;
    const int y = b.unary(OpId::Clone, b.rand({3}, program::DType::Float32, /*requires_grad=*/true));
    program::Attrs narrow;
    narrow.dim = 0, narrow.start = 0, narrow.length = 2;
    b.scalar(OpId::MulScalar_, b.step(OpId::Narrow, {y}, narrow), 2.0);  // y's grad_fn: CopySlices
    const int s = b.unary(OpId::Sum, y);
    b.backward(s);
    b.backward(s);
    expect_same_error(b);
  }
  {
    program::ProgramBuilder b;
    const int x = b.rand({2}, program::DType::Float32, /*requires_grad=*/true);
    const int d = b.binary(OpId::Sub, x, x);
    program::Attrs off;
    b.step(OpId::RequiresGrad_, {x}, off);
    // x, d's leaf, now has MulBackward0; w is outside d's graph, so no node keeps x alive through it (a cycle
    // LibTorch itself would leak).
    b.binary(OpId::Mul_, x, b.rand({2}, program::DType::Float32, /*requires_grad=*/true));
    b.backward(b.unary(OpId::Sum, d));
    expect_same_error(b);
  }
}

}  // namespace
}  // namespace parity
