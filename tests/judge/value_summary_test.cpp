// Large tensors in traces: the run loop keeps a summary in place of more than kFullValuesUpTo values, and compare
// still finds what the element-wise rule finds in them (one wrong element, a permutation, a NaN moved), without
// reporting what that rule tolerates; the JSON codec keeps summaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "judge/compare.h"
#include "judge/trace_json.h"
#include "program/content.h"
#include "program/json.h"
#include "program/program_builder.h"

namespace parity::judge {

using program::Attrs;
using program::DType;
using program::JsonError;
using program::OpId;
using program::ProgramBuilder;
using program::seeded_content;

namespace {

constexpr std::int64_t kLarge = std::int64_t{1} << 20;

// One step observing one 1-d tensor with these values, summarised as the run loop does.
Trace observed(std::vector<double> values, DType dtype = DType::Float32, std::string backend = "impl") {
  TensorObs o;
  o.value = 0;
  o.sizes = {static_cast<std::int64_t>(values.size())};
  o.strides = {1};
  o.dtype = dtype;
  o.alias_of = o.same_as = 0;
  o.contiguous = o.non_overlapping_dense = true;
  o.values = std::move(values);
  o.summary = summarise_if_large(o.values);
  StepObs s;
  s.observed.push_back(std::move(o));
  return Trace{std::move(backend), {std::move(s)}};
}

// Seeded contents: small multiples of 1/4 around 0, as programs' tensors hold.
std::vector<double> contents(std::int64_t n = kLarge, DType dtype = DType::Float32) {
  return seeded_content(7, n, dtype);
}

std::optional<Divergence> differ(std::vector<double> a, std::vector<double> b, DType dtype = DType::Float32) {
  return compare(observed(std::move(a), dtype), observed(std::move(b), dtype, "libtorch"));
}

void expect_values_differ(const std::optional<Divergence>& d) {
  ASSERT_TRUE(d) << "the difference went unseen";
  EXPECT_EQ(d->kind, DivergenceKind::Values);
  EXPECT_NE(d->impl.find("summarised"), std::string::npos) << d->impl;
}

TEST(ValueSummary, TheRunLoopSummarisesLargeTensorsUnlessToldToKeepEverything) {
  ProgramBuilder b;
  Attrs small, large;
  small.sizes = {static_cast<std::int64_t>(kFullValuesUpTo)};
  large.sizes = {static_cast<std::int64_t>(kFullValuesUpTo) + 1};
  b.step(OpId::Zeros, {}, small);
  b.step(OpId::Zeros, {}, large);
  auto impl = impl_backend::make_impl_backend();
  const Trace t = run(*impl, b.program());
  const TensorObs& kept = t.steps[0].observed.at(0);
  const TensorObs& summarised = t.steps[1].observed.at(0);
  EXPECT_EQ(kept.values.size(), kFullValuesUpTo);
  EXPECT_FALSE(kept.summary);
  EXPECT_TRUE(summarised.values.empty());
  ASSERT_TRUE(summarised.summary);
  EXPECT_EQ(summarised.summary->numel, static_cast<std::int64_t>(kFullValuesUpTo) + 1);
  const Trace all = run(*impl, b.program(), KeepValues::All);
  EXPECT_EQ(all.steps[1].observed.at(0).values.size(), kFullValuesUpTo + 1);
  EXPECT_FALSE(all.steps[1].observed.at(0).summary);
}

TEST(ValueSummary, EqualValuesAgree) {
  EXPECT_FALSE(differ(contents(), contents()));
  std::vector<double> with_nonfinite = contents();
  with_nonfinite[3] = std::nan("");
  with_nonfinite[9] = std::numeric_limits<double>::infinity();
  with_nonfinite[kLarge - 1] = -std::numeric_limits<double>::infinity();
  EXPECT_FALSE(differ(with_nonfinite, with_nonfinite));
}

// Every element off by as much as the element-wise rule tolerates (float32: atol 1e-5 + rtol 1.3e-6 |x|), in
// one direction or with alternating signs: no summary statistic may call that a difference.
TEST(ValueSummary, DifferencesWithinTheElementWiseToleranceAgree) {
  const Tolerance t = tolerance(DType::Float32);
  const std::vector<double> b = contents();
  std::vector<double> up = b, alternating = b;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double tol = 0.99 * (t.atol + t.rtol * std::fabs(b[i]));
    up[i] += tol;
    alternating[i] += i % 2 ? tol : -tol;
  }
  EXPECT_FALSE(differ(up, b));
  EXPECT_FALSE(differ(alternating, b));
}

// One element of 2^20 off by 1, staying between the tensor's min and max: the sum's tolerance (n atol = 10)
// hides it, the checksum does not.
TEST(ValueSummary, OneWrongElementOfALargeTensorIsFound) {
  const std::vector<double> b = contents();
  const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
  ASSERT_GE(*hi - *lo, 2.0);
  for (std::size_t at : {std::size_t{0}, std::size_t{12345}, b.size() - 1}) {
    std::vector<double> a = b;
    a[at] = a[at] + 1 <= *hi ? a[at] + 1 : a[at] - 1;
    SCOPED_TRACE("element " + std::to_string(at));
    expect_values_differ(differ(a, b));
  }
  // float64 (atol = rtol = 1e-7): the checksum finds one element of 2^20 (of magnitude up to 3) off by more than
  // about 17 sqrt(n) (atol + rtol |x|), 5e-3.
  const std::vector<double> b64 = contents(kLarge, DType::Float64);
  std::vector<double> a64 = b64;
  a64[777] += 0.01;
  expect_values_differ(differ(a64, b64, DType::Float64));
}

TEST(ValueSummary, APermutationIsFound) {
  const std::vector<double> b = contents();
  std::vector<double> reversed = b, rotated = b;
  std::reverse(reversed.begin(), reversed.end());
  std::rotate(rotated.begin(), rotated.begin() + 1, rotated.end());
  expect_values_differ(differ(reversed, b));
  expect_values_differ(differ(rotated, b));
}

// Zeros everywhere else, so that no statistic of the finite elements moves: only where the NaN is.
TEST(ValueSummary, ANaNOrAnInfinityInAnotherPlaceIsFound) {
  std::vector<double> a(kLarge, 0.0), b(kLarge, 0.0);
  a[10] = b[11] = std::nan("");
  expect_values_differ(differ(a, b));
  a[10] = std::numeric_limits<double>::infinity();
  b[10] = -std::numeric_limits<double>::infinity();
  b[11] = 0;
  expect_values_differ(differ(a, b));
  b[10] = std::nan("");
  expect_values_differ(differ(a, b));
}

TEST(ValueSummary, IntegersAreComparedExactly) {
  const std::vector<double> b = contents(kLarge, DType::Int64);
  std::vector<double> a = b;
  EXPECT_FALSE(differ(a, b, DType::Int64));
  a[5000] += 1;
  expect_values_differ(differ(a, b, DType::Int64));
}

// Traces of runs that kept different amounts (one side every value, the other a summary) compare by the same
// rule: the full side is summarised for the comparison.
TEST(ValueSummary, ASideWithEveryValueComparesWithASummarisedOne) {
  const std::vector<double> b = contents();
  Trace full = observed(b);
  full.steps[0].observed[0].values = b;
  full.steps[0].observed[0].summary.reset();
  EXPECT_FALSE(compare(full, observed(b, DType::Float32, "libtorch")));
  full.steps[0].observed[0].values[99] += 1;
  expect_values_differ(compare(full, observed(b, DType::Float32, "libtorch")));
}

TEST(ValueSummary, GradientsAreSummarisedAndCompared) {
  auto with_grad = [](std::vector<double> values, std::string backend) {
    Trace t = observed({1, 2}, DType::Float32, std::move(backend));
    GradObs g;
    g.sizes = {kLarge};
    g.strides = {1};
    g.values = std::move(values);
    g.summary = summarise_if_large(g.values);
    t.steps[0].observed[0].grad = std::move(g);
    return t;
  };
  const std::vector<double> b = contents();
  EXPECT_FALSE(compare(with_grad(b, "impl"), with_grad(b, "libtorch")));
  std::vector<double> a = b;
  std::swap(a[1], a[kLarge / 2]);
  ASSERT_NE(a[1], a[kLarge / 2]);
  const auto d = compare(with_grad(a, "impl"), with_grad(b, "libtorch"));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, DivergenceKind::GradValues);
}

TEST(ValueSummary, JsonKeepsASummary) {
  std::vector<double> v = contents();
  v[4] = std::nan("");
  const Trace t = observed(v);
  const nlohmann::json j = to_json(t);
  const nlohmann::json& o = j["steps"][0]["observed"][0];
  EXPECT_TRUE(o["values"].empty());
  EXPECT_EQ(o["values_summary"]["numel"], kLarge);
  EXPECT_EQ(o["values_summary"]["bits"].get<std::string>().size(), 16u);
  EXPECT_EQ(trace_from_json(nlohmann::json::parse(j.dump())), t);
  nlohmann::json beside = j;
  beside["steps"][0]["observed"][0]["values"] = {1.0};
  EXPECT_THROW(trace_from_json(beside), JsonError);
  nlohmann::json bad_hash = j;
  bad_hash["steps"][0]["observed"][0]["values_summary"]["bits"] = "0x12";
  EXPECT_THROW(trace_from_json(bad_hash), JsonError);
}

}  // namespace
}  // namespace parity::judge
