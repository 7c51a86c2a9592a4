// Hand-built programs run on LibTorch through the Backend interface, and the observations a test reads back:
// what the oracle's tests and the run loop's (taint) share.
#pragma once
#include <gtest/gtest.h>

#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::testing {

// A program builder whose run() is LibTorch's trace of it.
class Builder : public program::ProgramBuilder {
 public:
  judge::Trace run() const {
    auto backend = oracle::make_torch_backend();
    return judge::run(*backend, p_);
  }
};

// The observation of `value` made at a step; fails the test when the step did not observe it.
inline const judge::TensorObs& obs(const judge::StepObs& s, int value) {
  for (const auto& o : s.observed)
    if (o.value == value) return o;
  ADD_FAILURE() << "value " << value << " not observed";
  static const judge::TensorObs none;
  return none;
}

// The observation of the value a non-mutating step made.
inline const judge::TensorObs& result(const judge::Trace& t, int step) {
  EXPECT_EQ(t.steps.at(step).status, judge::StepObs::Status::Ok) << t.steps.at(step).message;
  return obs(t.steps.at(step), step);
}

}  // namespace parity::testing
