// Seed claims: factual statements found in the tutorials under shared/seeds, each restated in one sentence,
// turned into a Program and a check that reads the program's Trace. LibTorch decides whether a claim holds;
// impl must reach the same verdict with the same observed value.
//
// A check returns a Verdict: whether the claim holds on that trace, and the concrete observation that
// decides it ("x.grad = [6]", "backward raised version_mismatch"). Observations are rendered the same way for
// both backends, so two verdicts agree exactly when their texts are equal.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "judge/trace.h"
#include "program/program.h"

namespace parity::cli::claims {

struct Verdict {
  bool holds = false;
  std::string observed;
  bool operator==(const Verdict&) const = default;
};

struct Claim {
  std::string id;                    // stable, kebab-case: "clone-own-memory"
  std::string source;                // seed file the claim is taken from: "000_8f20afcace787d72.txt"
  std::vector<std::string> also_in;  // other seed files making the same claim
  std::string statement;             // the claim, in one sentence
  program::Program program;
  // Steps whose raising is what the claim is about; every other step must run (a step skipped because one of
  // these raised is fine). A program that does not run this way on LibTorch is a broken claim.
  std::vector<int> may_raise;
  std::function<Verdict(const judge::Trace&)> check;
};

// ---- reading a trace in a check ---------------------------------------------------------------------------

// A check asked for something the trace does not hold (a step that raised, a value not observed). The
// evaluator turns it into a failed verdict; on LibTorch it marks the claim as broken.
struct MissingObservation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Step `step`'s outcome; throws MissingObservation past the end of the trace.
const judge::StepObs& step_at(const judge::Trace& t, int step);
// The value a step made, observed right after it ran (the step must have succeeded).
const judge::TensorObs& made(const judge::Trace& t, int step);
// Value `value` as step `step` observed it (mutating and backward steps observe every live value).
const judge::TensorObs& seen(const judge::Trace& t, int step, int value);
bool succeeded(const judge::Trace& t, int step);

// ---- rendering observations ---------------------------------------------------------------------------------
// Sizes and strides are written with program::render_ints ("[4, 1, 4, 4]"). Values are written with num, to six
// significant digits (program::render_number writes the shortest text that reads back exactly).

std::string num(double v);                                // 5, 0.5, -1.25e-07
std::string nums(const std::vector<double>& v);           // [5, 5, 5]
std::string flag(bool b);                                 // true / false
std::string grad_of(const judge::TensorObs& o);         // "[6]" or "None"
std::string grad_fn_of(const judge::TensorObs& o);      // "CloneBackward0" or "None"
// "ran" or "raised <category>" (a skipped step: "was skipped").
std::string outcome_of(const judge::StepObs& s);
bool all_equal(const std::vector<double>& v, double x);
// Whether two observed values share storage (`later` observed at a step after `earlier` was made).
bool shares_storage(const judge::TensorObs& earlier, const judge::TensorObs& later);

// ---- the registry (seed_claims.cpp) ------------------------------------------------------------------------

// Every claim of the seed files, in the order of the files and of the text within each.
const std::vector<Claim>& seed_claims();

}  // namespace parity::cli::claims
