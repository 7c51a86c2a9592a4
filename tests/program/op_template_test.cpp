// program/op_template.h: what each placeholder of an op's templates stands for, and the expansion both the repro
// printers and the oracle's generated dispatch run.
#include <gtest/gtest.h>

#include <string>

#include "program/internal_assert.h"
#include "program/op_template.h"

namespace parity::program {
namespace {

// Every placeholder of every template names something its op has: the repro printers and the oracle's dispatch
// would otherwise stop on it, the first only when a finding of that op is printed.
TEST(OpTemplate, EveryPlaceholderOfEveryTemplateResolves) {
  for (const OpSpec& op : op_table()) {
    for (std::string_view text : {op.cpp, op.py}) {
      int placeholders = 0;
      expand_template(text, [&](std::string_view name) {
        ++placeholders;
        EXPECT_NO_THROW(resolve_placeholder(op, name)) << op.name << ": {" << name << "} in " << text;
        return std::string();
      });
      EXPECT_GE(placeholders, op.arity) << op.name << ": every operand appears in " << text;
    }
  }
}

TEST(OpTemplate, ExpandsNamesAndKeepsTheLanguagesBraces) {
  const auto render = [](std::string_view name) { return "<" + std::string(name) + ">"; };
  EXPECT_EQ(expand_template("torch::autograd::grad({ {0} }, { {1} }, {}, {retain_graph})[0]", render),
            "torch::autograd::grad({ <0> }, { <1> }, {}, <retain_graph>)[0]");
  EXPECT_EQ(expand_template("{0}.view({sizes})", render), "<0>.view(<sizes>)");
  EXPECT_EQ(expand_template("no placeholder", render), "no placeholder");
}

TEST(OpTemplate, SaysWhatEachPlaceholderIs) {
  const OpSpec& rand = spec(OpId::Rand);
  EXPECT_EQ(resolve_placeholder(rand, "data").kind, Placeholder::Kind::Data);
  const Placeholder strides = resolve_placeholder(rand, "strides");
  EXPECT_EQ(strides.kind, Placeholder::Kind::StridedPart);
  EXPECT_EQ(strides.part, "strides");
  const Placeholder operand = resolve_placeholder(spec(OpId::AddOut), "2");
  EXPECT_EQ(operand.kind, Placeholder::Kind::Operand);
  EXPECT_EQ(operand.operand, 2);
  const Placeholder device = resolve_placeholder(spec(OpId::EmptyLike), "device");
  ASSERT_EQ(device.kind, Placeholder::Kind::Attribute);
  EXPECT_EQ(device.attr->attr, Attr::LikeDevice);  // the _like factories' device, not a factory's
  EXPECT_EQ(device.attr->field, "like_device");
}

TEST(OpTemplate, RefusesWhatTheOpCannotFill) {
  EXPECT_THROW(resolve_placeholder(spec(OpId::Neg), "1"), InternalError);      // beyond its arity
  EXPECT_THROW(resolve_placeholder(spec(OpId::Neg), "dim"), InternalError);    // an attribute it does not read
  EXPECT_THROW(resolve_placeholder(spec(OpId::Zeros), "data"), InternalError);  // only rand has seeded contents
}

}  // namespace
}  // namespace parity::program
