// judge/coverage: what one case exercised, judged on LibTorch's trace. Each situation is checked on a small
// program run on the LibTorch backend, the way a campaign's child computes it, together with programs that
// come close to it without being it.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "judge/backend.h"
#include "judge/coverage.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::judge {

using program::Attrs;
using program::DType;
using program::MemoryFormat;
using program::op_table;
using program::OpId;
using program::OpSpec;
using program::Program;

namespace {

// The shared builder with the shorthands these tests use.
class Builder : public program::ProgramBuilder {
 public:
  int transpose(int x, bool grad_enabled = true) { return with_dims(OpId::Transpose, x, 0, 1, grad_enabled); }
  // sum(exp(x)): a scalar root whose graph saves a result, so a second backward needs retain_graph.
  int exp_loss(int x) { return unary(OpId::Sum, unary(OpId::Exp, x)); }
};

struct Covered {
  Trace oracle;
  CoverageTags tags;
  bool has(const std::string& situation) const {
    return std::find(tags.situations.begin(), tags.situations.end(), situation) != tags.situations.end();
  }
  bool met(const std::string& key) const {
    return std::find(tags.op_operands.begin(), tags.op_operands.end(), key) != tags.op_operands.end();
  }
  long layouts(const std::string& kind) const { return std::count(tags.layouts.begin(), tags.layouts.end(), kind); }
};

Covered run_on_libtorch(const Program& p) {
  auto backend = oracle::make_torch_backend();
  Covered r;
  r.oracle = run(*backend, p);
  r.tags = coverage_tags(p, r.oracle);
  return r;
}
Covered run_on_libtorch(const Builder& b) { return run_on_libtorch(b.program()); }

StepObs::Status status_of(const Covered& r, int step) { return r.oracle.steps[static_cast<std::size_t>(step)].status; }

TEST(Coverage, ExpectedKeysAreCompleteAndDistinct) {
  const auto& dims = coverage_dimensions();
  ASSERT_EQ(dims.size(), 11u);
  std::vector<std::string> names;
  for (const auto& d : dims) {
    names.emplace_back(d.name);
    EXPECT_EQ(std::set<std::string>(d.keys.begin(), d.keys.end()).size(), d.keys.size()) << d.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ops", "layouts", "memory_formats", "dtypes", "error_categories", "situations",
                                             "situation_pairs", "backward_through", "role_pairs",
                                             "role_triples", "op_operands"}));
  EXPECT_TRUE(dims.back().keys.empty()) << "no op × operand situation is a goal";
  // Every op but those only campaigns on cuda generate (to_device).
  std::size_t device_only = 0;
  for (const OpSpec& op : op_table()) device_only += op.device_only;
  EXPECT_EQ(device_only, 1u);
  EXPECT_EQ(op_names().size(), op_table().size() - device_only);
  EXPECT_EQ(all_situations().size(), 43u);
  EXPECT_EQ(layout_kinds().size(), 9u);
  EXPECT_EQ(memory_format_names(),
            (std::vector<std::string>{"contiguous_format", "channels_last", "channels_last_3d", "preserve_format"}));
  const auto& cats = expected_error_categories();
  for (const char* never : {"crash", "timeout", "out_of_memory", "internal_assert", "unclassified"})
    EXPECT_EQ(std::count(cats.begin(), cats.end(), never), 0) << never;
  EXPECT_EQ(std::count(cats.begin(), cats.end(), "version_mismatch"), 1);
  EXPECT_EQ(std::count(cats.begin(), cats.end(), "graph_freed"), 1);
}

TEST(Coverage, LayoutKindOfObservations) {
  auto obs = [](std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides) {
    TensorObs o;
    o.sizes = std::move(sizes);
    o.strides = std::move(strides);
    return o;
  };
  EXPECT_EQ(layout_kind(obs({}, {})), "zero_dim");
  EXPECT_EQ(layout_kind(obs({0, 3}, {3, 1})), "empty");
  EXPECT_EQ(layout_kind(obs({2, 3}, {0, 1})), "overlapping");
  TensorObs size1_zero_stride = obs({1, 3}, {0, 1});  // a 0 stride on a dim of size 1 overlaps nothing
  size1_zero_stride.contiguous = true;
  EXPECT_EQ(layout_kind(size1_zero_stride), "contiguous");
  TensorObs both = obs({1, 1, 1, 1}, {1, 1, 1, 1});  // contiguous wins over channels_last
  both.contiguous = both.channels_last = true;
  EXPECT_EQ(layout_kind(both), "contiguous");
  TensorObs cl = obs({2, 3, 2, 2}, {12, 1, 6, 3});
  cl.channels_last = cl.non_overlapping_dense = true;
  EXPECT_EQ(layout_kind(cl), "channels_last");
  TensorObs t = obs({3, 2}, {1, 3});
  t.non_overlapping_dense = true;
  EXPECT_EQ(layout_kind(t), "dense_non_contiguous");
  EXPECT_EQ(layout_kind(obs({3}, {2})), "non_dense");
}

TEST(Coverage, LayoutsOfOperandsOfOkSteps) {
  Builder b;
  int x = b.rand({2, 3});
  b.unary(OpId::Neg, x);                                          // contiguous
  b.unary(OpId::Neg, b.transpose(x));                             // transpose: contiguous, neg: dense_non_contiguous
  Attrs sl;
  sl.dim = 1;
  sl.start = 0;
  sl.end = 3;
  sl.step = 2;
  b.unary(OpId::Neg, b.step(OpId::Slice, {x}, sl));               // slice: contiguous, neg: non_dense
  b.unary(OpId::Neg, b.with_sizes(OpId::Expand, b.rand({1, 3}), {4, 3}));  // expand: contiguous, neg: overlapping
  b.unary(OpId::Neg, b.select(x, 0, 1));                          // select: contiguous, neg: contiguous + offset
  b.unary(OpId::Neg, b.unary(OpId::Sum, x));                      // sum: contiguous, neg: zero_dim
  b.unary(OpId::Neg, b.rand({0, 3}));                             // empty
  b.unary(OpId::Neg, b.rand_strided({2, 3, 2, 2}, {12, 1, 6, 3}, 0));              // channels_last
  b.unary(OpId::Neg, b.rand_strided({2, 3, 2, 2, 2}, {24, 1, 12, 6, 3}, 0));       // channels_last_3d
  b.with_sizes(OpId::View, b.transpose(x), {6});                  // raises view_stride: not counted
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(r.layouts("contiguous"), 8) << testing::PrintToString(r.tags.layouts);
  EXPECT_EQ(r.layouts("dense_non_contiguous"), 1);
  EXPECT_EQ(r.layouts("non_dense"), 1);
  EXPECT_EQ(r.layouts("overlapping"), 1);
  EXPECT_EQ(r.layouts("offset"), 1);
  EXPECT_EQ(r.layouts("zero_dim"), 1);
  EXPECT_EQ(r.layouts("empty"), 1);
  EXPECT_EQ(r.layouts("channels_last"), 1);
  EXPECT_EQ(r.layouts("channels_last_3d"), 1);
  EXPECT_EQ(status_of(r, static_cast<int>(b.program().steps.size()) - 1), StepObs::Status::Error);
}

TEST(Coverage, MemoryFormatsOfOkSteps) {
  Builder b;
  int x4 = b.rand({2, 3, 2, 2}), x5 = b.rand({1, 2, 2, 2, 2}), x2 = b.rand({2, 3});
  b.with_format(OpId::Clone, x4, MemoryFormat::ChannelsLast);
  b.with_format(OpId::EmptyLike, x5, MemoryFormat::ChannelsLast3d);
  b.with_format(OpId::Contiguous, x2, MemoryFormat::Contiguous);
  b.with_format(OpId::ZerosLike, x2, MemoryFormat::Preserve);
  int refused = b.with_format(OpId::Clone, x2, MemoryFormat::ChannelsLast);  // rank 2: raises
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(status_of(r, refused), StepObs::Status::Error);
  EXPECT_EQ(r.tags.memory_formats,
            (std::vector<std::string>{"channels_last", "channels_last_3d", "contiguous_format", "preserve_format"}));
}

TEST(Coverage, DtypesOfOkStepsResults) {
  Builder b;
  int i = b.rand({2}, DType::Int32);
  int h = b.rand({2}, DType::Float16);
  b.binary(OpId::Add, i, h);             // float16
  int refused = b.step(OpId::Mm, {h, h});  // mm of vectors raises on every release: not counted
  b.unary(OpId::Neg, i);                 // int32
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(status_of(r, refused), StepObs::Status::Error);
  EXPECT_EQ(r.tags.dtypes, (std::vector<std::string>{"int32", "float16", "float16", "int32"}));
}

TEST(Coverage, PlainArithmeticHasNoSituation) {
  Builder b;
  int x = b.rand({2, 3});
  b.unary(OpId::Sum, b.step(OpId::Add, {x, b.unary(OpId::Neg, x)}));
  EXPECT_TRUE(run_on_libtorch(b).tags.situations.empty());
}

TEST(Coverage, InplaceOnViews) {
  {
    Builder b;  // a view of a non-leaf requiring grad: the base's history is rewritten (CopySlices)
    int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
    b.scalar(OpId::AddScalar_, b.transpose(y), 2);
    Covered r = run_on_libtorch(b);
    EXPECT_TRUE(r.has("inplace_on_view_of_nonleaf"));
    EXPECT_FALSE(r.has("inplace_on_view_of_leaf_requiring_grad"));
    EXPECT_FALSE(r.has("inplace_on_leaf_requiring_grad"));
  }
  {
    Builder b;  // a view of a leaf requiring grad: LibTorch refuses, which is the situation too
    int v = b.select(b.rand({2, 3}, DType::Float32, true), 0, 0);
    int write = b.scalar(OpId::AddScalar_, v, 2);
    Covered r = run_on_libtorch(b);
    EXPECT_EQ(status_of(r, write), StepObs::Status::Error);
    EXPECT_TRUE(r.has("inplace_on_view_of_leaf_requiring_grad"));
    EXPECT_FALSE(r.has("inplace_on_view_of_nonleaf"));
  }
  {
    Builder b;  // the view made under no_grad, written with grad enabled
    int v = b.transpose(b.rand({2, 3}, DType::Float32, true), false);
    b.scalar(OpId::AddScalar_, v, 2);
    Covered r = run_on_libtorch(b);
    EXPECT_TRUE(r.has("inplace_on_nograd_view_with_grad"));
    EXPECT_FALSE(r.has("inplace_on_view_of_leaf_requiring_grad"));
    EXPECT_TRUE(r.has("grad_mode_nesting"));  // grad (rand), no_grad (transpose), grad (add_)
  }
  {
    Builder b;  // the same write under no_grad is no autograd situation
    int v = b.transpose(b.rand({2, 3}, DType::Float32, true), false);
    b.scalar(OpId::AddScalar_, v, 2, false);
    Covered r = run_on_libtorch(b);
    EXPECT_FALSE(r.has("inplace_on_nograd_view_with_grad"));
    EXPECT_FALSE(r.has("grad_mode_nesting"));
  }
  {
    Builder b;
    b.scalar(OpId::MulScalar_, b.rand({2}, DType::Float32, true), 2);
    EXPECT_TRUE(run_on_libtorch(b).has("inplace_on_leaf_requiring_grad"));
  }
}

// Situation pairs are two events on one tensor (one storage), in either order, counted when the second happens:
// retain_grad and a write through a view of the same non-leaf make a pair; the same two events on two tensors
// do not. A backward through the tensor pairs with both.
TEST(Coverage, SituationPairsAreEventsOnOneTensor) {
  EXPECT_EQ(situation_pairs().size(), tensor_events().size() * (tensor_events().size() - 1) / 2);
  {
    Builder b;
    int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
    b.step(OpId::RetainGrad, {y});
    b.scalar(OpId::AddScalar_, b.transpose(y), 2);
    b.backward(b.unary(OpId::Sum, y));
    Covered r = run_on_libtorch(b);
    const auto& pairs = r.tags.situation_pairs;
    for (const char* pair : {"retain_grad+write_via_view", "retain_grad+backward", "write_via_view+backward"})
      EXPECT_NE(std::find(pairs.begin(), pairs.end(), pair), pairs.end()) << pair;
    EXPECT_EQ(std::count(pairs.begin(), pairs.end(), "write_on_tensor+backward"), 0);
    // mul_scalar made y, which the backward goes through; rand (a factory) has no derivative.
    const auto& through = r.tags.backward_through;
    EXPECT_NE(std::find(through.begin(), through.end(), "mul_scalar"), through.end());
    EXPECT_EQ(std::count(through.begin(), through.end(), "rand"), 0);
  }
  {
    Builder b;
    int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
    int z = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
    b.step(OpId::RetainGrad, {y});
    b.scalar(OpId::AddScalar_, b.transpose(z), 2);
    Covered r = run_on_libtorch(b);
    EXPECT_TRUE(r.tags.situation_pairs.empty());
  }
}

TEST(Coverage, AReshapeThatCopiesIsNoView) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int r = b.with_sizes(OpId::Reshape, b.transpose(x), {6});  // transposed: reshape must copy
  b.scalar(OpId::AddScalar_, r, 2);
  Covered run = run_on_libtorch(b);
  EXPECT_FALSE(run.has("view_of_view"));
  EXPECT_FALSE(run.has("inplace_on_view_of_leaf_requiring_grad"));
  Builder v;
  v.with_sizes(OpId::Reshape, v.transpose(v.rand({2, 3})), {3, 2, 1});  // stays a view
  v.transpose(v.select(v.rand({2, 3, 4}), 0, 0));
  EXPECT_TRUE(run_on_libtorch(v).has("view_of_view"));
}

TEST(Coverage, ContiguousOfAContiguousViewIsThatView) {
  Builder b;
  int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
  b.scalar(OpId::AddScalar_, b.with_format(OpId::Contiguous, b.select(y, 0, 0), MemoryFormat::Contiguous), 2);
  EXPECT_TRUE(run_on_libtorch(b).has("inplace_on_view_of_nonleaf"));
  Builder copied;  // a transposed view is copied: the write goes to a fresh non-leaf
  int z = copied.scalar(OpId::MulScalar, copied.rand({2, 3}, DType::Float32, true), 2);
  copied.scalar(OpId::AddScalar_, copied.with_format(OpId::Contiguous, copied.transpose(z), MemoryFormat::Contiguous),
                2);
  EXPECT_FALSE(run_on_libtorch(copied).has("inplace_on_view_of_nonleaf"));
}

TEST(Coverage, ViewGradFnAfterBaseInplace) {
  Builder b;
  int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
  b.transpose(y);
  b.scalar(OpId::MulScalar_, y, 2);  // the transpose is observed after its base was written
  EXPECT_TRUE(run_on_libtorch(b).has("view_grad_fn_after_base_inplace"));

  Builder sibling;
  int z = sibling.scalar(OpId::MulScalar, sibling.rand({2, 3}, DType::Float32, true), 2);
  int v0 = sibling.select(z, 0, 0);
  sibling.select(z, 0, 1);
  sibling.scalar(OpId::AddScalar_, v0, 2);  // written through one view, the other one observed
  EXPECT_TRUE(run_on_libtorch(sibling).has("view_grad_fn_after_base_inplace"));

  Builder own;  // writing the view itself, or a view made after the write, is not the situation
  int w = own.scalar(OpId::MulScalar, own.rand({2, 3}, DType::Float32, true), 2);
  own.scalar(OpId::AddScalar_, own.transpose(w), 2);
  Builder later;
  int u = later.scalar(OpId::MulScalar, later.rand({2, 3}, DType::Float32, true), 2);
  later.scalar(OpId::MulScalar_, u, 2);
  later.transpose(u);
  EXPECT_FALSE(run_on_libtorch(own).has("view_grad_fn_after_base_inplace"));
  EXPECT_FALSE(run_on_libtorch(later).has("view_grad_fn_after_base_inplace"));
}

TEST(Coverage, DetachOfView) {
  Builder b;
  int x = b.rand({2, 3});
  b.unary(OpId::Detach, b.transpose(x));
  EXPECT_TRUE(run_on_libtorch(b).has("detach_of_view"));
  Builder refused;  // detach_ of a view raises detach_view
  int d = refused.unary(OpId::Detach_, refused.transpose(refused.rand({2, 3})));
  Covered r = run_on_libtorch(refused);
  EXPECT_EQ(status_of(r, d), StepObs::Status::Error);
  EXPECT_TRUE(r.has("detach_of_view"));
  Builder plain;
  plain.unary(OpId::Detach, plain.rand({2, 3}));
  EXPECT_FALSE(run_on_libtorch(plain).has("detach_of_view"));
}

TEST(Coverage, RequiresGradFlags) {
  Builder b;
  int y = b.scalar(OpId::MulScalar, b.rand({2}, DType::Float32, true), 2);
  b.requires_grad_(y, true);
  int off = b.requires_grad_(y, false);  // raises requires_grad_flag
  b.requires_grad_(b.rand({2}, DType::Int64), true);
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(status_of(r, off), StepObs::Status::Error);
  EXPECT_TRUE(r.has("requires_grad_on_nonleaf_true"));
  EXPECT_TRUE(r.has("requires_grad_on_nonleaf_false"));
  EXPECT_TRUE(r.has("requires_grad_on_integer"));
  Builder factory;  // rand(int64, requires_grad=True) asks for the same thing
  factory.rand({2}, DType::Int64, true);
  EXPECT_TRUE(run_on_libtorch(factory).has("requires_grad_on_integer"));
  Builder leaf;
  leaf.requires_grad_(leaf.rand({2}), true);
  Covered l = run_on_libtorch(leaf);
  EXPECT_FALSE(l.has("requires_grad_on_nonleaf_true"));
  EXPECT_FALSE(l.has("requires_grad_on_integer"));
}

TEST(Coverage, GradientsAfterBackward) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  int y = b.scalar(OpId::MulScalar, x, 2);
  b.backward(b.unary(OpId::Sum, y));
  Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.has("grad_of_nonleaf_undefined"));
  EXPECT_FALSE(r.has("grad_of_retained_nonleaf"));
  EXPECT_TRUE(r.has("leaf_grad_layout_contiguous"));
  EXPECT_FALSE(r.has("second_backward_accumulates"));

  Builder retained;
  int rx = retained.rand({2, 3}, DType::Float32, true);
  int ry = retained.scalar(OpId::MulScalar, rx, 2);
  retained.step(OpId::RetainGrad, {ry});
  retained.backward(retained.unary(OpId::Sum, ry));
  EXPECT_TRUE(run_on_libtorch(retained).has("grad_of_retained_nonleaf"));
}

// .grad as a value: written in place through a `grad` step's value, assigned, reset. A write to a tensor that is
// not a gradient is none of them.
TEST(Coverage, GradValues) {
  Builder b;
  int x = b.rand({2, 3}, DType::Float32, true);
  b.backward(b.unary(OpId::Sum, x));
  int other = b.rand({2, 3}, DType::Float32, false);
  b.unary(OpId::Zero_, other);
  Covered plain = run_on_libtorch(b);
  EXPECT_FALSE(plain.has("grad_value_written_in_place"));
  EXPECT_FALSE(plain.has("grad_assigned"));
  int g = b.unary(OpId::Grad, x);
  b.unary(OpId::Zero_, g);
  Covered written = run_on_libtorch(b);
  EXPECT_TRUE(written.has("grad_value_written_in_place"));
  EXPECT_FALSE(written.has("grad_reset"));
  b.step(OpId::SetGrad, {x, other});
  b.unary(OpId::ResetGrad, x);
  Covered all = run_on_libtorch(b);
  EXPECT_TRUE(all.has("grad_assigned"));
  EXPECT_TRUE(all.has("grad_reset"));
}

TEST(Coverage, LeafGradientLayouts) {
  auto layout_after_backward = [](std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides) {
    Builder b;
    b.backward(b.unary(OpId::Sum, b.rand_strided(std::move(sizes), std::move(strides), 0, DType::Float32, true)));
    return run_on_libtorch(b);
  };
  EXPECT_TRUE(layout_after_backward({2, 3, 2, 2}, {12, 1, 6, 3}).has("leaf_grad_layout_channels_last"));
  EXPECT_TRUE(layout_after_backward({3, 2}, {1, 3}).has("leaf_grad_layout_dense_non_contiguous"));
  EXPECT_TRUE(layout_after_backward({3, 2}, {0, 1}).has("leaf_grad_layout_overlapping"));
  Covered no_backward = [] {
    Builder b;
    b.unary(OpId::Sum, b.rand({2}, DType::Float32, true));
    return run_on_libtorch(b);
  }();
  EXPECT_TRUE(no_backward.tags.situations.empty());
}

TEST(Coverage, RetainGraphAndSecondBackward) {
  Builder b;
  int x = b.rand({2}, DType::Float32, true);
  int loss = b.exp_loss(x);
  b.backward(loss, true);
  b.backward(loss);
  Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.has("retain_graph_then_backward"));
  EXPECT_TRUE(r.has("second_backward_accumulates"));
  EXPECT_FALSE(r.has("graph_freed_error"));

  Builder freed;
  int fl = freed.exp_loss(freed.rand({2}, DType::Float32, true));
  freed.backward(fl);
  int again = freed.backward(fl);
  Covered f = run_on_libtorch(freed);
  EXPECT_EQ(f.oracle.steps[static_cast<std::size_t>(again)].category, ErrorCategory::GraphFreed);
  EXPECT_TRUE(f.has("graph_freed_error"));
  EXPECT_FALSE(f.has("retain_graph_then_backward"));

  Builder separate;  // a retained graph, then a backward over another graph of the same leaf
  int sx = separate.rand({2}, DType::Float32, true);
  separate.backward(separate.exp_loss(sx), true);
  separate.backward(separate.exp_loss(sx));
  Covered s = run_on_libtorch(separate);
  EXPECT_FALSE(s.has("retain_graph_then_backward"));
  EXPECT_TRUE(s.has("second_backward_accumulates"));
}

// A backward through a gradient with history: what a create_graph autograd.grad returned, or a .grad read after a
// create_graph backward. A second backward over the first graph alone is not one.
TEST(Coverage, DoubleBackwardGoesThroughAGradientWithHistory) {
  Attrs recorded;
  recorded.retain_graph = recorded.create_graph = true;
  Builder b;
  int x = b.rand({2}, DType::Float32, true);
  int g = b.step(OpId::AutogradGrad, {b.exp_loss(x), x}, recorded);
  b.backward(b.unary(OpId::Sum, g));
  EXPECT_TRUE(run_on_libtorch(b).has("double_backward"));

  Builder through_grad;
  int y = through_grad.rand({2}, DType::Float32, true);
  through_grad.step(OpId::Backward, {through_grad.exp_loss(y)}, recorded);
  through_grad.backward(through_grad.unary(OpId::Sum, through_grad.unary(OpId::Grad, y)));
  EXPECT_TRUE(run_on_libtorch(through_grad).has("double_backward"));

  Builder again;
  int z = again.rand({2}, DType::Float32, true);
  int loss = again.exp_loss(z);
  again.step(OpId::Backward, {loss}, recorded);
  again.backward(loss);
  EXPECT_FALSE(run_on_libtorch(again).has("double_backward"));
}

// An out= step that resized its out (here one of no elements); one into an out of the result's shape did not.
TEST(Coverage, OutResized) {
  Attrs no_elements;
  no_elements.sizes = {0};
  Builder b;
  int x = b.rand({2}, DType::Float32, false);
  b.step(OpId::AddOut, {b.step(OpId::Zeros, {}, no_elements), x, x});
  EXPECT_TRUE(run_on_libtorch(b).has("out_resized"));

  Builder fits;
  int y = fits.rand({2}, DType::Float32, false);
  fits.step(OpId::MulOut, {fits.rand({2}, DType::Float32, false), y, y});
  EXPECT_FALSE(run_on_libtorch(fits).has("out_resized"));
}

TEST(Coverage, InplaceOnSavedResultThenBackward) {
  Builder b;
  int e = b.unary(OpId::Exp, b.rand({2}, DType::Float32, true));
  b.scalar(OpId::MulScalar_, e, 2);
  int back = b.backward(b.unary(OpId::Sum, e));
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(r.oracle.steps[static_cast<std::size_t>(back)].category, ErrorCategory::VersionMismatch);
  EXPECT_TRUE(r.has("inplace_on_saved_result"));
  EXPECT_TRUE(r.has("version_error"));

  Builder through_view;  // a write through a view of the result bumps the same version counter
  int e2 = through_view.unary(OpId::Exp, through_view.rand({2, 2}, DType::Float32, true));
  through_view.scalar(OpId::MulScalar_, through_view.select(e2, 0, 0), 2);
  through_view.backward(through_view.unary(OpId::Sum, e2));
  EXPECT_TRUE(run_on_libtorch(through_view).has("inplace_on_saved_result"));

  Builder no_backward;
  no_backward.scalar(OpId::MulScalar_, no_backward.unary(OpId::Exp, no_backward.rand({2}, DType::Float32, true)), 2);
  EXPECT_FALSE(run_on_libtorch(no_backward).has("inplace_on_saved_result"));
  Builder no_grad;  // exp of a tensor not requiring grad saves nothing
  int e3 = no_grad.unary(OpId::Exp, no_grad.rand({2}));
  no_grad.scalar(OpId::MulScalar_, e3, 2);
  no_grad.backward(no_grad.unary(OpId::Sum, no_grad.rand({1}, DType::Float32, true)));
  EXPECT_FALSE(run_on_libtorch(no_grad).has("inplace_on_saved_result"));
}

TEST(Coverage, Copies) {
  Builder b;
  int x = b.rand({2, 3});
  b.with_format(OpId::Clone, b.unary(OpId::Detach, x), MemoryFormat::Preserve);
  b.unary(OpId::Detach, b.with_format(OpId::Clone, x, MemoryFormat::Preserve));
  b.step(OpId::Copy_, {b.with_format(OpId::EmptyLike, x, MemoryFormat::Preserve), x});
  Covered r = run_on_libtorch(b);
  for (const char* s : {"copy_clone", "copy_detach_clone", "copy_clone_detach", "copy_empty_like_copy_"})
    EXPECT_TRUE(r.has(s)) << s;

  Builder other;  // copy_ into an empty_like of another tensor is a plain copy_
  int a = other.rand({2, 3}), c = other.rand({2, 3});
  other.step(OpId::Copy_, {other.with_format(OpId::EmptyLike, a, MemoryFormat::Preserve), c});
  Covered o = run_on_libtorch(other);
  EXPECT_FALSE(o.has("copy_empty_like_copy_"));
  EXPECT_FALSE(o.has("copy_clone"));
}

// Each op × operand situation, met by the step in it and not by one beside it.
TEST(Coverage, AViewOfAWrittenStorageIsMetByTheStepReadingIt) {
  Builder b;
  const int x = b.rand({2, 3});
  const int v = b.select(x, 0, 0);
  b.unary(OpId::Neg, v);  // before the write: version 0
  b.scalar(OpId::AddScalar_, x, 1);
  b.unary(OpId::Exp, v);
  const Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.met("exp:view_written"));
  EXPECT_FALSE(r.met("neg:view_written"));
  EXPECT_FALSE(r.met("add_scalar_:view_written")) << "the base written is no view";
}

TEST(Coverage, ADestinationSharingItsSourcesStorage) {
  Builder b;
  const int x = b.rand({2, 3}), y = b.rand({2, 3});
  b.binary(OpId::Mul_, x, b.unary(OpId::Detach, x));
  b.binary(OpId::Add_, x, y);
  b.binary(OpId::Sub, x, x);  // reads twice, writes nothing: no key
  const Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.met("mul_:shared_storage"));
  EXPECT_FALSE(r.met("add_:shared_storage"));
  EXPECT_FALSE(op_operand_index("sub:shared_storage").has_value());
}

TEST(Coverage, AZeroDimOperandOfAnotherDtype) {
  Builder b;
  const int x = b.rand({2, 3});
  b.binary(OpId::Add_, x, b.full({}, 2, false, DType::Float64));
  b.binary(OpId::Mul_, x, b.full({}, 2, false, DType::Float32));
  b.binary(OpId::Sub_, x, b.rand({3}, DType::Float64));
  const Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.met("add_:zero_dim_other"));
  EXPECT_FALSE(r.met("mul_:zero_dim_other")) << "the same dtype";
  EXPECT_FALSE(r.met("sub_:zero_dim_other")) << "not 0-dim";
}

TEST(Coverage, AnEdgeScalarIsMetRefusedOrNot) {
  Builder b;
  const int x = b.rand({2, 3});
  b.scalar(OpId::MulScalar, x, std::numeric_limits<double>::infinity());
  b.scalar(OpId::AddScalar, x, -0.0);
  b.scalar(OpId::SubScalar, x, 3);
  b.scalar(OpId::Fill_, b.rand({2}, DType::Float16), 1e6);  // float16 overflows: refused, still the situation
  const Covered r = run_on_libtorch(b);
  EXPECT_TRUE(r.met("mul_scalar:edge_scalar"));
  EXPECT_TRUE(r.met("add_scalar:edge_scalar"));
  EXPECT_FALSE(r.met("sub_scalar:edge_scalar")) << "3 is in the small range";
  EXPECT_EQ(status_of(r, 5), StepObs::Status::Error);
  EXPECT_TRUE(r.met("fill_:edge_scalar"));
}

TEST(Coverage, AGradOperandAndADeepcopyMemoHoldingItsRelatives) {
  // x.grad then x deep-copied, and y then a view of y; `apart`: each copy under a memo of its own.
  auto copies = [](bool apart) {
    Builder b;
    const int x = b.rand({2, 3}, DType::Float32, true);
    b.backward(b.unary(OpId::Sum, x));
    const int g = b.unary(OpId::Grad, x);
    b.unary(OpId::Neg, g);
    b.deepcopy(g, 1);
    b.deepcopy(x, apart ? 2 : 1);
    const int y = b.rand({4});
    b.deepcopy(y, 3);
    b.deepcopy(b.select(y, 0, 1), apart ? 4 : 3);
    return run_on_libtorch(b);
  };
  const Covered r = copies(false);
  EXPECT_TRUE(r.met("neg:grad_operand"));
  EXPECT_FALSE(r.met("neg:view_written"));
  EXPECT_TRUE(r.met("deepcopy:grad_operand"));
  EXPECT_TRUE(r.met("deepcopy:memo_grad"));
  EXPECT_TRUE(r.met("deepcopy:memo_storage"));
  const Covered o = copies(true);
  EXPECT_FALSE(o.met("deepcopy:memo_grad"));
  EXPECT_FALSE(o.met("deepcopy:memo_storage"));
}

TEST(Coverage, TotalOverOddProgramsAndTraces) {
  Builder b;
  int x = b.rand({2}, DType::Float32, true);
  b.step(OpId::Neg, {5});       // an input that is no earlier step: skipped
  b.step(OpId::Add, {x});       // wrong arity: skipped
  b.scalar(OpId::AddScalar_, x, 2);
  Covered r = run_on_libtorch(b);
  EXPECT_EQ(status_of(r, 1), StepObs::Status::Skipped);
  EXPECT_TRUE(r.has("inplace_on_leaf_requiring_grad"));
  // A trace shorter than its program, or without observations, is read as far as it goes.
  Trace cut = r.oracle;
  cut.steps.resize(2);
  EXPECT_TRUE(coverage_tags(b.program(), cut).situations.empty());
  Trace blind = r.oracle;
  for (auto& s : blind.steps) s.observed.clear();
  EXPECT_TRUE(coverage_tags(b.program(), blind).layouts.empty());
  EXPECT_NO_THROW(coverage_tags(Program{}, r.oracle));
}

}  // namespace
}  // namespace parity::judge
