// The op table's ATen schemas: the parser, the table's annotations against its own traits and against what
// LibTorch registers, and the run loop's schema check on programs that share memory between operands.
#include <gtest/gtest.h>

#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "judge/schema_check.h"
#include "oracle/torch_backend.h"
#include "program/aten_schema.h"
#include "program/op_table.h"
#include "program/program_builder.h"

namespace parity::program {

using judge::Backend;
using judge::StepObs;
using judge::TensorObs;
using judge::Trace;

namespace {

TEST(AtenSchema, ParsesArgumentsReturnsAndAnnotations) {
  const AtenSchema s = parse_aten_schema(
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_EQ(s.name, "aten::add_");
  EXPECT_EQ(s.overload, "Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0], (SchemaValue{"self", "Tensor", "a", true}));
  EXPECT_EQ(s.arguments[1], (SchemaValue{"other", "Tensor", "", false}));
  EXPECT_EQ(s.arguments[2], (SchemaValue{"alpha", "Scalar", "", false, /*keyword_only=*/true}));
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_EQ(s.returns[0], (SchemaValue{"", "Tensor", "a", true}));
  EXPECT_EQ(s.tensor_argument(1), &s.arguments[1]);
  EXPECT_EQ(s.tensor_argument(2), nullptr);
  EXPECT_EQ(s.return_aliasing(s.arguments[0]), &s.returns[0]);
  EXPECT_EQ(s.return_aliasing(s.arguments[1]), nullptr);
}

// An out= overload's out comes first among a step's operands, as ATen's C++ API takes it (at::add_out(out, a, b)).
TEST(AtenSchema, AnOutOverloadsOutIsOperandZero) {
  const AtenSchema s =
      parse_aten_schema("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  ASSERT_EQ(s.arguments.size(), 4u);
  EXPECT_EQ(s.tensor_argument(0), &s.arguments[3]);
  EXPECT_EQ(s.tensor_argument(1), &s.arguments[0]);
  EXPECT_EQ(s.tensor_argument(2), &s.arguments[1]);
  EXPECT_EQ(s.tensor_argument(3), nullptr);
}

// What makes an out= overload is a written keyword-only tensor, not the overload's name (eq.Tensor_out); an
// in-place overload's written self stays where it is.
TEST(AtenSchema, AnOutOverloadIsOneWithAWrittenKeywordOnlyTensor) {
  const AtenSchema eq =
      parse_aten_schema("aten::eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(eq.tensor_argument(0), &eq.arguments[2]);
  EXPECT_EQ(eq.tensor_argument(1), &eq.arguments[0]);
  const AtenSchema add_ =
      parse_aten_schema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_EQ(add_.tensor_argument(0), &add_.arguments[0]);
}

TEST(AtenSchema, ParsesListsDefaultsWithCommasAndTuples) {
  const AtenSchema unbind = parse_aten_schema("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]");
  EXPECT_EQ(unbind.arguments[0], (SchemaValue{"self", "Tensor", "a", false}));
  EXPECT_EQ(unbind.returns[0], (SchemaValue{"", "Tensor[]", "a", false}));
  const AtenSchema sum = parse_aten_schema("aten::f(Tensor self, int[2] dims=[0, 1]) -> (Tensor(a) values, Tensor i)");
  EXPECT_EQ(sum.overload, "");
  ASSERT_EQ(sum.arguments.size(), 2u);
  EXPECT_EQ(sum.arguments[1], (SchemaValue{"dims", "int[2]", "", false}));
  ASSERT_EQ(sum.returns.size(), 2u);
  EXPECT_EQ(sum.returns[0], (SchemaValue{"values", "Tensor", "a", false}));
  EXPECT_EQ(sum.returns[1], (SchemaValue{"i", "Tensor", "", false}));
  EXPECT_TRUE(parse_aten_schema("aten::retain_grad(Tensor(a!) self) -> ()").returns.empty());
}

TEST(AtenSchema, RefusesMalformedText) {
  for (const char* bad : {"add(Tensor self) -> Tensor", "aten::add(Tensor self -> Tensor", "aten::add(Tensor) -> Tensor",
                          "aten::add(Tensor() self) -> Tensor", "aten::add(Tensor self)", "aten::add(int[ x) -> Tensor"})
    EXPECT_THROW(parse_aten_schema(bad), std::invalid_argument) << bad;
}

// The annotations say what the op table's own traits say: operands are the schema's tensors in order, an
// in-place op writes and returns operand 0, a view aliases it, a fresh result aliases nothing.
TEST(AtenSchema, TableAnnotationsAgreeWithTheOpTraits) {
  for (const OpSpec& op : op_table()) {
    SCOPED_TRACE(std::string(op.name));
    const AtenSchema* s = aten_schema(op.id);
    if (!s) {
      EXPECT_TRUE(op.schema.empty());
      continue;
    }
    std::size_t tensors = 0;
    for (const auto& a : s->arguments) tensors += a.tensor();
    EXPECT_EQ(tensors, static_cast<std::size_t>(op.arity));
    const SchemaValue* self = s->tensor_argument(0);
    const SchemaValue* ret = self ? s->return_aliasing(*self) : nullptr;
    switch (op.result) {
      case ResultIs::Operand:
        ASSERT_NE(ret, nullptr);
        EXPECT_TRUE(self->writes && ret->writes);
        break;
      case ResultIs::View:
      case ResultIs::ViewOrCopy:
      case ResultIs::ExpandedView:
      case ResultIs::OperandIfNoOp:
      case ResultIs::Alias:
        ASSERT_NE(ret, nullptr);
        EXPECT_FALSE(self->writes || ret->writes);
        break;
      case ResultIs::Fresh:
      case ResultIs::UnsafeAlias:
        for (const auto& r : s->returns) EXPECT_EQ(r.alias_set, "");
        break;
      case ResultIs::Nothing: EXPECT_TRUE(s->returns.empty()); break;
      case ResultIs::Grad: ADD_FAILURE() << "no aten op gives this result"; break;
    }
    for (std::size_t i = 1; i < static_cast<std::size_t>(op.arity); ++i)
      EXPECT_FALSE(s->tensor_argument(i)->writes) << "only operand 0 is ever written";
  }
}

// Each annotation is LibTorch's: the schema it registers under the same name has the same tensors, alias sets
// and writes (defaults and integer types vary across versions and are not compared).
TEST(AtenSchema, TableAnnotationsAreLibTorchsRegisteredOnes) {
  int checked = 0;
  for (const OpSpec& op : op_table()) {
    const AtenSchema* ours = aten_schema(op.id);
    if (!ours) continue;
    SCOPED_TRACE(std::string(op.schema));
    const auto text = oracle::registered_schema(ours->name, ours->overload);
    ASSERT_TRUE(text.has_value()) << "LibTorch " << oracle::torch_version() << " registers no such operator";
    const AtenSchema theirs = parse_aten_schema(*text);
    auto annotations = [](const std::vector<SchemaValue>& values) {
      std::vector<std::tuple<std::string, bool, std::string, bool>> out;
      for (const auto& v : values) out.emplace_back(v.name, v.tensor(), v.alias_set, v.writes);
      return out;
    };
    EXPECT_EQ(annotations(ours->arguments), annotations(theirs.arguments)) << "LibTorch registers " << *text;
    EXPECT_EQ(annotations(ours->returns), annotations(theirs.returns)) << "LibTorch registers " << *text;
    ++checked;
  }
  EXPECT_GT(checked, 80);
}

std::vector<std::unique_ptr<Backend>> both_backends() {
  std::vector<std::unique_ptr<Backend>> out;
  out.push_back(oracle::make_torch_backend());
  if (auto impl = impl_backend::make_impl_backend()) out.push_back(std::move(impl));
  return out;
}

// An operand that shares memory with the written one is written too, as SchemaInfo counts aliased inputs:
// add_(x, x) and x.copy_(view of x) conform. A view aliases its operand as annotated; clone does not.
TEST(SchemaCheck, AliasedOperandsInheritTheWrittenOnesPermission) {
  ProgramBuilder b;
  const int x = b.rand({2, 3});
  b.binary(OpId::Add_, x, x);
  const int row = b.select(x, 0, 1);
  const int whole = b.with_sizes(OpId::View, x, {6});
  b.binary(OpId::Copy_, row, b.select(x, 0, 0));
  b.binary(OpId::Mul_, whole, whole);
  b.clone(x);
  for (auto& backend : both_backends()) {
    const Trace t = run(*backend, b.program());
    for (std::size_t i = 0; i < t.steps.size(); ++i) {
      EXPECT_EQ(t.steps[i].status, StepObs::Status::Ok) << backend->name() << " step " << i;
      EXPECT_TRUE(t.steps[i].schema_violations.empty()) << backend->name() << " step " << i << ": "
                                                         << t.steps[i].schema_violations.front();
    }
  }
}

// A version can move without a write: after set_data a tensor shares its version counter with a detached alias
// of its old data, so writing the tensor bumps the alias's version, whose memory is untouched. That conforms
// (SchemaCheckMode compares values); a planted write that changes an operand's values does not.
TEST(SchemaCheck, AVersionMovedThroughASharedCounterIsNoWrite) {
  ProgramBuilder b;
  const int x = b.rand({1, 2, 1});
  const int c = b.clone(x);
  const int old = b.unary(OpId::Detach, c);
  b.step(OpId::SetData, {c, x});
  const int add = b.binary(OpId::Add_, c, old);
  for (auto& backend : both_backends()) {
    const Trace t = run(*backend, b.program());
    ASSERT_EQ(t.steps.at(static_cast<std::size_t>(add)).status, StepObs::Status::Ok) << backend->name();
    for (const TensorObs& o : t.steps[static_cast<std::size_t>(add)].observed) {
      if (o.value == old) {
        EXPECT_EQ(o.version, 1) << backend->name() << ": the shared counter moved";
      }
    }
    EXPECT_TRUE(t.steps[static_cast<std::size_t>(add)].schema_violations.empty())
        << backend->name() << ": " << t.steps[static_cast<std::size_t>(add)].schema_violations.front();
  }
}

}  // namespace
}  // namespace parity::program
