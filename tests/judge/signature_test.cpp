// Divergence kinds and signatures: the text findings.jsonl and run.json hold, written and read in one place.
#include "judge/signature.h"

#include <gtest/gtest.h>

#include "judge/compare.h"
#include "judge/divergence_kind.h"

namespace parity::judge {

using program::Program;

namespace {

TEST(DivergenceKind, NamesRoundTrip) {
  int n = 0;
#define PARITY_TEST_KIND(name, str)                                 \
  EXPECT_EQ(to_string(DivergenceKind::name), str);                  \
  EXPECT_EQ(parse_divergence_kind(str), DivergenceKind::name) << str; \
  ++n;
  PARITY_DIVERGENCE_KINDS(PARITY_TEST_KIND)
#undef PARITY_TEST_KIND
  EXPECT_EQ(n, 36);
  EXPECT_EQ(parse_divergence_kind("Values"), std::nullopt);
  EXPECT_EQ(parse_divergence_kind(""), std::nullopt);
  EXPECT_EQ(parse_divergence_kind("values "), std::nullopt);
}

TEST(Signature, ToStringWritesEachForm) {
  EXPECT_EQ((Signature{"mul", DivergenceKind::Values, {}}).to_string(), "mul:values");
  EXPECT_EQ((Signature{"program", DivergenceKind::Crash, {}}).to_string(), "program:crash");
  EXPECT_EQ((Signature{"neg", DivergenceKind::Status, ErrorCategory::Argument}).to_string(), "neg:status:argument");
  EXPECT_EQ((Signature{"neg", DivergenceKind::Status, {}}).to_string(), "neg:status");
  EXPECT_EQ((Signature{"transpose", DivergenceKind::ErrorCategory,
                       SideCategories{ErrorCategory::Shape, ErrorCategory::IndexRange}})
                .to_string(),
            "transpose:error_category:impl=shape,oracle=index_range");
  EXPECT_EQ((Signature{"view", DivergenceKind::ErrorCategory, SideCategories{std::nullopt, ErrorCategory::Shape}})
                .to_string(),
            "view:error_category:impl=none,oracle=shape");
  EXPECT_EQ((Signature{"select", DivergenceKind::GradFn,
                       SideCategories{ErrorCategory::ViewInPlace, ErrorCategory::InternalAssert}})
                .to_string(),
            "select:grad_fn:impl=view_inplace,oracle=internal_assert");
  EXPECT_EQ((Signature{"neg", DivergenceKind::Crash, Signal{"SIGSEGV"}}).to_string(), "neg:crash:SIGSEGV");
}

TEST(Signature, ParseRoundTrips) {
  for (const char* text :
       {"mul:values", "backward:grad_values", "program:crash", "program:timeout", "add:step_count", "neg:status",
        "neg:status:argument", "expand:status:argument", "clone:strides_size1", "add_scalar_:grad_strides_size1",
        "transpose:error_category:impl=shape,oracle=index_range", "view:error_category:impl=none,oracle=none",
        "select:grad_fn:impl=view_inplace,oracle=internal_assert", "select:grad_fn", "neg:crash:SIGSEGV",
        "neg:crash:SIGABRT", "program:crash:SIG35", "select:exception_type:index_range", "neg:exception_type"}) {
    auto s = Signature::parse(text);
    ASSERT_TRUE(s) << text;
    EXPECT_EQ(s->to_string(), text);
  }
  auto s = Signature::parse("neg:status:argument");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->op, "neg");
  EXPECT_EQ(s->kind, DivergenceKind::Status);
  EXPECT_EQ(s->detail, (decltype(s->detail){ErrorCategory::Argument}));
  // A segfault and an abort of one op are two bugs.
  EXPECT_EQ(Signature::parse("neg:crash:SIGABRT")->detail, (decltype(s->detail){Signal{"SIGABRT"}}));
  EXPECT_NE(Signature::parse("neg:crash:SIGSEGV"), Signature::parse("neg:crash:SIGABRT"));
}

TEST(Signature, ParseRefusesMalformedText) {
  for (const char* text : {"", ":", "mul", "mul:", ":values", "mul:value", "mul:values:", "mul:values:shape",
                           "mul::values", "Mul:values", "mul-x:values", "mul:values:x:y", "neg:status:",
                           "neg:status:nonsense", "neg:status:impl=shape,oracle=shape", "neg:error_category",
                           "neg:error_category:shape", "neg:error_category:impl=shape",
                           "neg:error_category:impl=shape,oracle=", "neg:error_category:oracle=shape,impl=shape",
                           "neg:error_category:impl=shape,oracle=shape,", "neg:error_category:impl=bogus,oracle=shape",
                           "neg:grad_fn:impl=none,oracle=shape", "neg:grad_fn:view_inplace", "program:crash:crash",
                           "neg:crash:SIG", "neg:crash:sigsegv", "neg:crash:SEGV", "neg:crash:SIGsegv",
                           "neg:crash:SIGSEGV:x", "neg:timeout:SIGKILL", "neg:values:SIGSEGV",
                           "neg:status:SIGSEGV",
                           "mul:values\n", " mul:values", "mul:values "}) {
    EXPECT_EQ(Signature::parse(text), std::nullopt) << '"' << text << '"';
  }
}

TEST(Signature, OrderedAsTheirText) {
  auto a = Signature::parse("add:values").value(), b = Signature::parse("add_:alias").value();
  // By fields the kinds would order values after alias; as text "add:" sorts before "add_".
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_FALSE(a < a);
}

TEST(Signature, OfAGradFnRefusedOnBothSides) {
  Program p;
  Divergence d;
  d.kind = DivergenceKind::GradFn;
  d.impl = raised_marker(ErrorCategory::ViewInPlace);
  d.oracle = raised_marker(ErrorCategory::InternalAssert);
  EXPECT_EQ(signature(p, d).to_string(), "program:grad_fn:impl=view_inplace,oracle=internal_assert");
  d.oracle = "ViewBackward0";  // only one side refused: no categories
  EXPECT_EQ(signature(p, d).to_string(), "program:grad_fn");
  EXPECT_EQ(raised_marker_category("<raised view_inplace>"), ErrorCategory::ViewInPlace);
  EXPECT_EQ(raised_marker_category("<raised nonsense>"), std::nullopt);
  EXPECT_EQ(raised_marker_category("<raised >"), std::nullopt);
  EXPECT_EQ(raised_marker_category("<raised"), std::nullopt);
}

}  // namespace
}  // namespace parity::judge
