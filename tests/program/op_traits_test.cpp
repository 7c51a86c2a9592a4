// The op table's traits are claims about PyTorch; these tests hold every entry to them on LibTorch (and on impl),
// so that a new op with a wrong trait fails here rather than skewing generation and coverage unnoticed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "generators/attr_gen.h"
#include "generators/rng.h"
#include "impl_backend/backend.h"
#include "judge/trace.h"
#include "oracle/torch_backend.h"
#include "program/op_table.h"
#include "program/program.h"
#include "program/step_schema.h"

namespace parity {
namespace {

using program::Attrs;
using program::DType;
using program::Meta;
using program::OpId;
using program::OpSpec;
using program::Program;
using program::ResultIs;
using program::Saves;
using program::Step;
using judge::StepObs;
using judge::Trace;

judge::Backend& torch_backend() {
  static auto b = oracle::make_torch_backend();
  return *b;
}
judge::Backend& impl_backend() {
  static auto b = impl_backend::make_impl_backend();
  return *b;
}

int add(Program& p, OpId op, std::vector<int> inputs, Attrs a = {}) {
  p.steps.push_back(Step{op, std::move(inputs), std::move(a), true});
  return static_cast<int>(p.steps.size()) - 1;
}

int rand_leaf(Program& p, std::vector<std::int64_t> sizes, bool requires_grad) {
  Attrs a;
  a.sizes = sizes;
  a.strides.assign(sizes.size(), 0);
  std::int64_t s = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    a.strides[i] = s;
    s *= sizes[i];
  }
  a.dtype = DType::Float64;
  a.requires_grad = requires_grad;
  a.seed = 3;
  return add(p, OpId::Rand, {}, a);
}

// Attributes the generator would pick for `op` on a float64 operand of `sizes`, drawn until the shape rule accepts.
Attrs attrs_for(OpId op, const std::vector<std::int64_t>& sizes, bool requires_grad) {
  generators::Rng rng(11);
  const Meta m{sizes, DType::Float64, requires_grad};
  std::vector<Meta> ms(static_cast<std::size_t>(program::spec(op).arity), m);
  std::int64_t numel = m.numel();
  for (int i = 0; i < 200; ++i) {
    Attrs a = generators::valid_attrs(rng, op, ms, numel);
    if (program::spec(op).infer(ms, a)) return a;
  }
  ADD_FAILURE() << "no valid attributes found for " << program::spec(op).name;
  return {};
}

const judge::TensorObs* find(const StepObs& so, int value) {
  for (const auto& o : so.observed)
    if (o.value == value) return &o;
  return nullptr;
}

bool differentiable_unary(const OpSpec& op) {
  return op.arity == 1 && !op.is_inplace() && op.kind == program::OpKind::Arithmetic;
}

// Writing what an op saves, before backward, must be a version error; writing what it does not save must not.
// The trait decides where the generator aims its in-place writes and which coverage situations count.
TEST(OpTraits, SavesNamesWhatWritingBreaksBackward) {
  for (const OpSpec& op : program::op_table()) {
    if (!differentiable_unary(op)) continue;
    for (bool write_result : {false, true}) {
      Program p;
      const int x = rand_leaf(p, {2, 3}, true);
      Attrs half;
      half.scalar = {program::Scalar::Kind::Float, 0.5};
      const int c = add(p, OpId::MulScalar, {x}, half);  // a non-leaf input, so writing it is allowed
      const int y = add(p, op.id, {c}, attrs_for(op.id, {2, 3}, true));
      Attrs zero;
      zero.scalar = {program::Scalar::Kind::Float, 0.0};
      add(p, OpId::AddScalar_, {write_result ? y : c}, zero);
      const int s = add(p, OpId::Sum, {y});
      add(p, OpId::Backward, {s});
      const bool should_raise = write_result ? op.saves == Saves::Result : op.saves == Saves::Self;
      for (judge::Backend* b : {&torch_backend(), &impl_backend()}) {
        const Trace t = judge::run(*b, p);
        ASSERT_EQ(t.steps[static_cast<std::size_t>(y)].status, StepObs::Status::Ok) << op.name;
        const StepObs& back = t.steps.back();
        EXPECT_EQ(back.status == StepObs::Status::Error && back.category == judge::ErrorCategory::VersionMismatch,
                  should_raise)
            << b->name() << ": " << op.name << " with its " << (write_result ? "result" : "input")
            << " written before backward: " << back.message;
      }
    }
  }
}

// What the table says an op's result is (a view, an alias, its operand, a fresh tensor) is what LibTorch returns.
TEST(OpTraits, ResultIsWhatLibTorchReturns) {
  for (const OpSpec& op : program::op_table()) {
    if (op.arity != 1 || op.kind == program::OpKind::Factory || op.result == ResultIs::Nothing ||
        op.result == ResultIs::ViewOrCopy || op.result == ResultIs::OperandIfNoOp || op.result == ResultIs::Grad ||
        op.refuses)
      continue;
    Program p;
    const std::vector<std::int64_t> sizes = op.operand0.max_rank < 3 ? std::vector<std::int64_t>{3, 4}
                                                                      : std::vector<std::int64_t>{2, 3, 4};
    const int x = rand_leaf(p, sizes, false);
    const int y = add(p, op.id, {x}, attrs_for(op.id, sizes, false));
    const Trace t = judge::run(torch_backend(), p);
    const StepObs& so = t.steps[static_cast<std::size_t>(y)];
    ASSERT_EQ(so.status, StepObs::Status::Ok) << op.name << ": " << so.message;
    const auto* r = find(so, y);
    ASSERT_NE(r, nullptr) << op.name;
    const bool shares = r->alias_of == x;
    switch (op.result) {
      case ResultIs::View:
      case ResultIs::ExpandedView:
        EXPECT_TRUE(r->is_view && shares) << op.name << " should be a view of its operand";
        break;
      case ResultIs::Alias:
      case ResultIs::UnsafeAlias:
        EXPECT_TRUE(!r->is_view && shares) << op.name << " should share its operand's storage without being a view";
        break;
      case ResultIs::Operand: EXPECT_TRUE(shares) << op.name << " should return its operand"; break;
      case ResultIs::Fresh: EXPECT_FALSE(shares) << op.name << " should return a tensor of its own"; break;
      case ResultIs::ViewOrCopy:
      case ResultIs::OperandIfNoOp:
      case ResultIs::Grad:  // GradIsTheGradientTensorItself
      case ResultIs::Nothing: break;
    }
  }
}

// x.grad = y, y.grad = x (C++ allows it): deepcopy recurses as Python's does, into RecursionError, and raises
// instead of overflowing the stack. On LibTorch (the deepcopy recipe) and on impl.
TEST(OpTraits, DeepcopyOfAGradientCycleRaises) {
  for (judge::Backend* b : {&torch_backend(), &impl_backend()}) {
    Program p;
    const int x = rand_leaf(p, {2}, false);
    const int y = rand_leaf(p, {2}, false);
    add(p, OpId::SetGrad, {x, y});
    add(p, OpId::SetGrad, {y, x});
    Attrs memo;
    memo.memo = 1;
    const int c = add(p, OpId::Deepcopy, {x}, memo);
    const Trace tr = judge::run(*b, p);
    EXPECT_EQ(tr.steps[c].status, StepObs::Status::Error) << b->name();
    EXPECT_EQ(tr.steps[c].category, judge::ErrorCategory::Argument) << b->name() << ": " << tr.steps[c].message;
  }
}

// `grad` is the .grad tensor itself: a write into it is a write into the gradient, and backward accumulates into
// it in place. set_grad makes the gradient the very tensor assigned; reset_grad leaves none, and `grad` then
// gives no value. On LibTorch and on impl.
TEST(OpTraits, GradIsTheGradientTensorItself) {
  for (judge::Backend* b : {&torch_backend(), &impl_backend()}) {
    Program p;
    const int x = rand_leaf(p, {2, 3}, true);
    const int s = add(p, OpId::Sum, {x});
    Attrs retain;
    retain.retain_graph = true;
    const int none = add(p, OpId::Grad, {x});
    add(p, OpId::Backward, {s}, retain);
    const int g = add(p, OpId::Grad, {x});
    add(p, OpId::Zero_, {g});
    const int bw = add(p, OpId::Backward, {s}, retain);
    Attrs ones;
    ones.sizes = {2, 3};
    ones.dtype = DType::Float64;
    const int t = add(p, OpId::Ones, {}, ones);
    const int set = add(p, OpId::SetGrad, {x, t});
    const int bw2 = add(p, OpId::Backward, {s}, retain);
    const int reset = add(p, OpId::ResetGrad, {x});
    const int after = add(p, OpId::Grad, {x});
    const Trace tr = judge::run(*b, p);
    for (const StepObs& so : tr.steps) ASSERT_EQ(so.status, StepObs::Status::Ok) << b->name() << ": " << so.message;
    EXPECT_EQ(find(tr.steps[none], none), nullptr) << b->name() << ": no gradient yet, no value";
    const auto* gx = find(tr.steps[bw], x);
    ASSERT_TRUE(gx && gx->grad) << b->name();
    EXPECT_EQ(gx->grad->same_as, g) << b->name();
    EXPECT_EQ(gx->grad->replaced, 0) << b->name();
    EXPECT_EQ(gx->grad->values, std::vector<double>(6, 1.0)) << b->name() << ": zeroed, then one backward";
    const auto* assigned = find(tr.steps[set], x);
    ASSERT_TRUE(assigned && assigned->grad) << b->name();
    EXPECT_EQ(assigned->grad->same_as, t) << b->name();
    EXPECT_EQ(assigned->grad->replaced, 1) << b->name();
    EXPECT_EQ(find(tr.steps[bw2], t)->values, std::vector<double>(6, 2.0)) << b->name() << ": accumulated in place";
    EXPECT_FALSE(find(tr.steps[reset], x)->grad) << b->name();
    EXPECT_EQ(find(tr.steps[after], after), nullptr) << b->name();
  }
}

// An in-place form takes its out-of-place op's operands and attributes; the table refuses anything else.
TEST(OpTraits, InPlaceFormsMatchTheirOutOfPlaceOps) {
  for (const OpSpec& op : program::op_table()) {
    if (!op.inplace_of) continue;
    const OpSpec& of = program::spec(*op.inplace_of);
    EXPECT_TRUE(op.is_inplace()) << op.name;
    EXPECT_EQ(op.arity, of.arity) << op.name;
    EXPECT_EQ(op.attrs, of.attrs) << op.name;
    EXPECT_EQ(op.saves, of.saves) << op.name;
    EXPECT_EQ(op.result, ResultIs::Operand) << op.name;
  }
}

// reports/schema/ops.schema.json is generated from the table; a table change must regenerate it.
TEST(OpTraits, CheckedInStepSchemaIsTheTables) {
  const std::string path = std::string(PARITY_SOURCE_DIR) + "/reports/schema/ops.schema.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str() == program::step_schema_text())
      << path << " differs from the op table: regenerate it with `build/parity list --schema > "
      << "reports/schema/ops.schema.json`";
}

}  // namespace
}  // namespace parity
