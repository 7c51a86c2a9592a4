// compare: the first difference, metadata before values, Major before Minor, tolerances by dtype; signatures.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "judge/compare.h"

namespace parity::judge {

using program::DType;
using program::OpId;
using program::Program;
using program::Step;

namespace {

using Severity = Divergence::Severity;

TensorObs tensor(int id, std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides,
                 std::vector<double> values, DType dtype = DType::Float32) {
  TensorObs o;
  o.value = id;
  o.sizes = std::move(sizes);
  o.strides = std::move(strides);
  o.dtype = dtype;
  o.alias_of = id;
  o.same_as = id;
  o.contiguous = true;
  o.non_overlapping_dense = true;
  o.values = std::move(values);
  return o;
}

StepObs ok(std::vector<TensorObs> observed) {
  StepObs s;
  s.observed = std::move(observed);
  return s;
}

StepObs error(ErrorCategory c, std::string message = "boom") {
  StepObs s;
  s.status = StepObs::Status::Error;
  s.category = c;
  s.message = std::move(message);
  return s;
}

Trace trace(std::vector<StepObs> steps, std::string backend = "impl") {
  return Trace{std::move(backend), std::move(steps)};
}

// A two-step base: v0 = rand [2, 3], v1 = transpose -> [3, 2].
Trace base() {
  return trace({ok({tensor(0, {2, 3}, {3, 1}, {1, 2, 3, 4, 5, 6})}),
                ok({tensor(1, {3, 2}, {1, 3}, {1, 4, 2, 5, 3, 6})})});
}

Program base_program() {
  Program p;
  Step r;
  r.op = OpId::Rand;
  p.steps.push_back(r);
  Step t;
  t.op = OpId::Transpose;
  t.inputs = {0};
  p.steps.push_back(t);
  return p;
}

TEST(Compare, IdenticalTracesAgree) { EXPECT_FALSE(compare(base(), base()).has_value()); }

TEST(Compare, StepCount) {
  Trace a = base();
  a.steps.pop_back();
  auto d = compare(a, base());
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "step_count");
}

TEST(Compare, StatusDifferenceCarriesTheCategory) {
  Trace a = base(), b = base();
  b.steps[1] = error(ErrorCategory::IndexRange, "Dimension out of range");
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->step, 1);
  EXPECT_EQ(d->value, -1);
  EXPECT_EQ(to_string(d->kind), "status");
  EXPECT_EQ(d->impl, "ok");
  EXPECT_EQ(d->oracle, "error(index_range): Dimension out of range");
  EXPECT_EQ(d->oracle_category, ErrorCategory::IndexRange);
  EXPECT_FALSE(d->impl_category);
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:status:index_range");
  // The other way round: the impl raised.
  d = compare(b, a);
  ASSERT_TRUE(d);
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:status:index_range");
}

TEST(Compare, ErrorCategory) {
  Trace a = base(), b = base();
  a.steps[1] = error(ErrorCategory::Shape);
  b.steps[1] = error(ErrorCategory::IndexRange);
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "error_category");
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:error_category:impl=shape,oracle=index_range");
  // Same category in other words: a divergence of its own kind, signed by the category.
  b.steps[1] = error(ErrorCategory::Shape, "other words");
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "message");
  EXPECT_EQ(d->severity, Divergence::Severity::Major);
  EXPECT_NE(d->oracle.find("other words"), std::string::npos);
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:message:shape");
}

// The same category as another C++ class (IndexError against c10::Error) is a divergence of its own, judged
// before the message, and only where both sides name the class.
TEST(Compare, ExceptionTypeWhereBothSidesNameIt) {
  Trace a = base(), b = base();
  a.steps[1] = error(ErrorCategory::IndexRange, "other words");
  b.steps[1] = error(ErrorCategory::IndexRange);
  b.steps[1].exception = judge::ExceptionType::IndexError;
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, judge::DivergenceKind::Message);  // impl names no class: only the words are judged
  a.steps[1].exception = judge::ExceptionType::Error;
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "exception_type");
  EXPECT_EQ(d->severity, Divergence::Severity::Major);
  EXPECT_EQ(d->impl.rfind("c10::Error: ", 0), 0u) << d->impl;
  EXPECT_EQ(d->oracle.rfind("c10::IndexError: ", 0), 0u) << d->oracle;
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:exception_type:index_range");
  a.steps[1] = b.steps[1];
  EXPECT_FALSE(compare(a, b));
}

// Only what PyTorch varies from run to run is taken out of a message before comparing: addresses.
TEST(Compare, MessagesDifferingOnlyInAnAddressAgree) {
  Trace a = base(), b = base();
  a.steps[1] = error(ErrorCategory::Argument, "tensor at 0x7f3a10c0 is not contiguous");
  b.steps[1] = error(ErrorCategory::Argument, "tensor at 0x55d2e8 is not contiguous");
  EXPECT_FALSE(compare(a, b));
  b.steps[1] = error(ErrorCategory::Argument, "tensor at 0x55d2e8 is not Contiguous");
  ASSERT_TRUE(compare(a, b));
  EXPECT_EQ(compare(a, b)->kind, judge::DivergenceKind::Message);
  b.steps[1] = error(ErrorCategory::Argument, "tensor at 0x is not contiguous");  // no digits: not an address
  EXPECT_TRUE(compare(a, b));
}

TEST(Compare, ObservedSet) {
  Trace a = base(), b = base();
  b.steps[1].observed.push_back(tensor(0, {2, 3}, {3, 1}, {1, 2, 3, 4, 5, 6}));
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "observed_set");
  EXPECT_EQ(d->impl, "[v1]");
  EXPECT_EQ(d->oracle, "[v0, v1]");
}

TEST(Compare, MetadataBeforeValues) {
  Trace a = base(), b = base();
  a.steps[1].observed[0].sizes = {2, 3};
  a.steps[1].observed[0].values = {9, 9, 9, 9, 9, 9};
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "sizes");
  EXPECT_EQ(d->value, 1);
  EXPECT_EQ(d->impl, "[2, 3]");
  EXPECT_EQ(d->oracle, "[3, 2]");
  EXPECT_EQ(signature(base_program(), *d).to_string(), "transpose:sizes");
}

TEST(Compare, EachMetadataKind) {
  struct Case {
    const char* kind;
    void (*mutate)(TensorObs&);
  };
  const Case cases[] = {
      {"dtype", [](TensorObs& o) { o.dtype = DType::Float64; }},
      {"device", [](TensorObs& o) { o.device = "cuda:0"; }},
      {"strides", [](TensorObs& o) { o.strides = {2, 1}; }},
      {"offset", [](TensorObs& o) { o.offset = 1; }},
      {"alias", [](TensorObs& o) { o.alias_of = 0; }},
      {"identity", [](TensorObs& o) { o.same_as = 0; }},
      {"version", [](TensorObs& o) { o.version = 1; }},
      {"requires_grad", [](TensorObs& o) { o.requires_grad = true; }},
      {"is_leaf", [](TensorObs& o) { o.is_leaf = false; }},
      {"retains_grad", [](TensorObs& o) { o.retains_grad = true; }},
      {"grad_fn", [](TensorObs& o) { o.grad_fn = "TransposeBackward0"; }},
      {"contiguity", [](TensorObs& o) { o.channels_last = true; }},
      {"values", [](TensorObs& o) { o.values[3] = 7; }},
      {"grad_defined", [](TensorObs& o) { o.grad = GradObs{{3, 2}, {2, 1}, DType::Float32, {}}; }},
  };
  for (const auto& c : cases) {
    Trace a = base(), b = base();
    c.mutate(a.steps[1].observed[0]);
    auto d = compare(a, b);
    ASSERT_TRUE(d) << c.kind;
    EXPECT_EQ(to_string(d->kind), c.kind);
    EXPECT_EQ(d->step, 1);
    EXPECT_EQ(d->value, 1);
    EXPECT_EQ(d->severity, Severity::Major) << c.kind;
    EXPECT_NE(d->impl, d->oracle) << c.kind;
  }
}

TEST(Compare, RendersForPeople) {
  Trace a = base(), b = base();
  a.steps[1].observed[0].alias_of = 0;
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->impl, "shares storage with v0");
  EXPECT_EQ(d->oracle, "own storage");
  a = base();
  a.steps[1].observed[0].values[3] = 7;
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->impl, "element 3 of 6 = 7");
  EXPECT_EQ(d->oracle, "element 3 of 6 = 5");
}

TEST(Compare, StridesOfSizeOneDimsAreMinor) {
  Trace a = trace({ok({tensor(0, {2, 1, 3}, {3, 3, 1}, {1, 2, 3, 4, 5, 6})})});
  Trace b = trace({ok({tensor(0, {2, 1, 3}, {3, 1, 1}, {1, 2, 3, 4, 5, 6})})});
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "strides_size1");
  EXPECT_EQ(d->severity, Severity::Minor);
  // A difference in a dim of size > 1 is a real one.
  b.steps[0].observed[0].strides = {1, 1, 2};
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "strides");
  EXPECT_EQ(d->severity, Severity::Major);
}

TEST(Compare, EmptyTensorsStridesAndOffsetAreMinor) {
  Trace a = trace({ok({tensor(0, {0, 3}, {3, 1}, {})})});
  Trace b = trace({ok({tensor(0, {0, 3}, {1, 5}, {})})});
  b.steps[0].observed[0].offset = 4;
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "strides_size1");
  EXPECT_EQ(d->severity, Severity::Minor);
  b.steps[0].observed[0].strides = {3, 1};
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "offset");
  EXPECT_EQ(d->severity, Severity::Minor);
  // Not so for a non-empty tensor.
  Trace c = base(), e = base();
  c.steps[0].observed[0].offset = 1;
  d = compare(c, e);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "offset");
  EXPECT_EQ(d->severity, Severity::Major);
}

TEST(Compare, AMajorDifferenceLaterWinsOverAnEarlierMinorOne) {
  Trace a = trace({ok({tensor(0, {2, 1}, {1, 1}, {1, 2})}), ok({tensor(1, {2}, {1}, {1, 2})})});
  Trace b = trace({ok({tensor(0, {2, 1}, {1, 2}, {1, 2})}), ok({tensor(1, {2}, {1}, {1, 3})})});
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "values");
  EXPECT_EQ(d->step, 1);
  // Without the later one, the Minor one is reported.
  b.steps[1].observed[0].values = {1, 2};
  d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "strides_size1");
  EXPECT_EQ(d->step, 0);
}

TEST(Compare, FirstMajorInTraceOrder) {
  Trace a = base(), b = base();
  a.steps[0].observed[0].version = 1;
  a.steps[1].observed[0].sizes = {1};
  auto d = compare(a, b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->step, 0);
  EXPECT_EQ(to_string(d->kind), "version");
}

TEST(Compare, ToleranceByDtype) {
  auto diverges = [](double x, double y, DType dt) {
    Trace a = trace({ok({tensor(0, {1}, {1}, {x}, dt)})});
    Trace b = trace({ok({tensor(0, {1}, {1}, {y}, dt)})});
    return compare(a, b).has_value();
  };
  EXPECT_FALSE(diverges(1.0, 1.0 + 1e-6, DType::Float32));
  EXPECT_TRUE(diverges(1.0, 1.001, DType::Float32));
  EXPECT_FALSE(diverges(0.0, 5e-6, DType::Float32));  // atol
  EXPECT_TRUE(diverges(1.0, 1.0 + 1e-6, DType::Float64));
  EXPECT_FALSE(diverges(1.0, 1.0 + 1e-8, DType::Float64));
  EXPECT_TRUE(diverges(3.0, 4.0, DType::Int64));
  EXPECT_FALSE(diverges(3.0, 3.0, DType::Int64));
  EXPECT_TRUE(diverges(0.0, 1.0, DType::Bool));
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(diverges(nan, nan, DType::Float32));
  EXPECT_TRUE(diverges(nan, 1.0, DType::Float32));
  EXPECT_TRUE(diverges(1.0, nan, DType::Float32));
  EXPECT_FALSE(diverges(inf, inf, DType::Float32));
  EXPECT_TRUE(diverges(inf, -inf, DType::Float32));
  EXPECT_TRUE(diverges(inf, 1e38, DType::Float32));
  EXPECT_EQ(tolerance(DType::Float32).rtol, 1.3e-6);
  EXPECT_EQ(tolerance(DType::Float32).atol, 1e-5);
  EXPECT_EQ(tolerance(DType::Float64).atol, 1e-7);
  EXPECT_EQ(tolerance(DType::Int64).rtol, 0.0);
}

TEST(Compare, UndefinedValuesAreNotCompared) {
  Trace a = base(), b = base();
  a.steps[0].observed[0].values = {9, 9, 9, 9, 9, 9};
  a.steps[0].observed[0].values_defined = false;
  b.steps[0].observed[0].values_defined = false;
  EXPECT_FALSE(compare(a, b));
}

TEST(Compare, Gradients) {
  auto with_grad = [](GradObs g) {
    Trace t = base();
    t.steps[1].observed[0].grad = std::move(g);
    return t;
  };
  GradObs g{{3, 2}, {2, 1}, DType::Float32, {1, 1, 1, 1, 1, 1}};
  EXPECT_FALSE(compare(with_grad(g), with_grad(g)));

  GradObs h = g;
  h.sizes = {6};
  EXPECT_EQ(to_string(compare(with_grad(h), with_grad(g))->kind), "grad_sizes");
  h = g;
  h.dtype = DType::Float64;
  EXPECT_EQ(to_string(compare(with_grad(h), with_grad(g))->kind), "grad_dtype");
  h = g;
  h.strides = {1, 3};
  EXPECT_EQ(to_string(compare(with_grad(h), with_grad(g))->kind), "grad_strides");
  h = g;
  h.same_as = 0;
  EXPECT_EQ(to_string(compare(with_grad(h), with_grad(g))->kind), "grad_identity");
  h = g;
  h.replaced = 1;
  auto replaced = compare(with_grad(h), with_grad(g));
  ASSERT_TRUE(replaced);
  EXPECT_EQ(to_string(replaced->kind), "grad_identity");
  EXPECT_EQ(replaced->impl, "not a program value, replaced 1 time");
  h = g;
  h.version = 2;
  auto version = compare(with_grad(h), with_grad(g));
  ASSERT_TRUE(version);
  EXPECT_EQ(to_string(version->kind), "grad_version");
  EXPECT_EQ(version->impl, "2");
  h = g;
  h.grad_alias_of = 0;
  auto shared = compare(with_grad(h), with_grad(g));
  ASSERT_TRUE(shared);
  EXPECT_EQ(to_string(shared->kind), "grad_alias");
  EXPECT_EQ(shared->impl, "own storage, the .grad of v0");
  h = g;
  h.values[5] = 2;
  EXPECT_EQ(to_string(compare(with_grad(h), with_grad(g))->kind), "grad_values");
  // Values that were not comparable are skipped.
  h.values.clear();
  EXPECT_FALSE(compare(with_grad(h), with_grad(g)));

  GradObs s{{3, 1}, {1, 1}, DType::Float32, {1, 1, 1}}, t = s;
  t.strides = {1, 3};
  auto d = compare(with_grad(s), with_grad(t));
  ASSERT_TRUE(d);
  EXPECT_EQ(to_string(d->kind), "grad_strides_size1");
  EXPECT_EQ(d->severity, Severity::Minor);
}

TEST(Compare, SignatureOfAStepOutsideTheProgram) {
  Divergence d;
  d.step = -1;
  d.kind = DivergenceKind::Crash;
  EXPECT_EQ(signature(base_program(), d).to_string(), "program:crash");
  d.step = 1;
  EXPECT_EQ(signature(base_program(), d).to_string(), "transpose:crash");
  d.signal = "SIGSEGV";  // killed by a signal: the signature names it
  EXPECT_EQ(signature(base_program(), d).to_string(), "transpose:crash:SIGSEGV");
}

}  // namespace
}  // namespace parity::judge
