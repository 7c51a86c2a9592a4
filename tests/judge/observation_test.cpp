// What a side does not observe is not compared: forget_unobserved clears exactly those fields.
#include <gtest/gtest.h>

#include "judge/compare.h"
#include "judge/observation.h"

namespace parity::judge {

namespace {

Trace one_tensor(std::int64_t version, std::vector<double> values, std::string grad_fn) {
  TensorObs t;
  t.value = 0;
  t.sizes = {2};
  t.strides = {1};
  t.version = version;
  t.values = std::move(values);
  t.grad_fn = std::move(grad_fn);
  t.alias_of = t.same_as = 0;
  StepObs s;
  s.observed.push_back(t);
  return Trace{"x", {s}};
}

TEST(Observation, NamesReadBack) {
  for (std::size_t i = 0; i < kObservationCount; ++i) {
    const auto o = static_cast<Observation>(i);
    EXPECT_EQ(parse_observation(to_string(o)), o);
  }
  EXPECT_FALSE(parse_observation("colour"));
}

TEST(Observation, UnobservedFieldsAreNotCompared) {
  Trace a = one_tensor(1, {1, 2}, "MulBackward0"), b = one_tensor(2, {1, 2}, "MulBackward0");
  ASSERT_TRUE(compare(a, b));  // the version differs
  Observations without_version;
  without_version = Observations::none();
  for (std::size_t i = 0; i < kObservationCount; ++i)
    if (static_cast<Observation>(i) != Observation::Version) without_version.add(static_cast<Observation>(i));
  forget_unobserved(a, without_version);
  forget_unobserved(b, without_version);
  EXPECT_FALSE(compare(a, b));
  // What is still observed is still compared.
  Trace c = one_tensor(1, {1, 3}, "MulBackward0");
  forget_unobserved(c, without_version);
  EXPECT_TRUE(compare(a, c));
  EXPECT_EQ(not_compared_sentence(without_version), "not compared: version counters");
  EXPECT_EQ(not_compared_sentence(Observations()), "");
}

TEST(Observation, ErrorsWithoutMessages) {
  StepObs s;
  s.status = StepObs::Status::Error;
  s.category = ErrorCategory::Shape;
  s.message = "shape '[3]' is invalid";
  Trace a{"x", {s}}, b = a;
  b.steps[0].message = "cannot view";
  Observations no_messages = Observations::none();
  no_messages.add(Observation::Errors);
  forget_unobserved(a, no_messages);
  forget_unobserved(b, no_messages);
  EXPECT_FALSE(compare(a, b));
  EXPECT_EQ(a.steps[0].category, ErrorCategory::Shape);
}

}  // namespace

}  // namespace parity::judge
