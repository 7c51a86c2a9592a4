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

#include "program/program.h"
#include "program/trace.h"

namespace parity::claims {

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
  std::function<Verdict(const program::Trace&)> check;
};

// ---- reading a trace in a check ---------------------------------------------------------------------------

// A check asked for something the trace does not hold (a step that raised, a value not observed). The
// evaluator turns it into a failed verdict; on LibTorch it marks the claim as broken.
struct MissingObservation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Step `step`'s outcome; throws MissingObservation past the end of the trace.
const program::StepObs& step_at(const program::Trace& t, int step);
// The value a step made, observed right after it ran (the step must have succeeded).
const program::TensorObs& made(const program::Trace& t, int step);
// Value `value` as step `step` observed it (mutating and backward steps observe every live value).
const program::TensorObs& seen(const program::Trace& t, int step, int value);
bool succeeded(const program::Trace& t, int step);

// ---- rendering observations ---------------------------------------------------------------------------------

std::string num(double v);                                // 5, 0.5, -1.25e-07
std::string nums(const std::vector<double>& v);           // [5, 5, 5]
std::string ints(const std::vector<std::int64_t>& v);     // [4, 1, 4, 4]
std::string flag(bool b);                                 // true / false
std::string grad_of(const program::TensorObs& o);         // "[6]" or "None"
std::string grad_fn_of(const program::TensorObs& o);      // "CloneBackward0" or "None"
// "ran" or "raised <category>" (a skipped step: "was skipped").
std::string outcome_of(const program::StepObs& s);
bool all_equal(const std::vector<double>& v, double x);
// Whether two observed values share storage (`later` observed at a step after `earlier` was made).
bool shares_storage(const program::TensorObs& earlier, const program::TensorObs& later);
// Whether a value's storage is its own: no value made before it shares it.
bool own_storage(const program::TensorObs& o);

// ---- building claim programs ----------------------------------------------------------------------------------

// Appends steps; each helper returns the id of the value its step makes (for backward: the step's index).
class Build {
 public:
  int step(program::OpId op, std::vector<int> inputs, program::Attrs a = {}, bool grad_enabled = true);
  // torch.full(sizes, value, dtype, requires_grad): torch.tensor([2.0], requires_grad=True) is full({1}, 2, rg).
  int full(std::vector<std::int64_t> sizes, double value, bool requires_grad = false,
           program::DType dtype = program::DType::Float32);
  int ones(std::vector<std::int64_t> sizes, bool requires_grad = false);
  int arange(std::int64_t end, program::DType dtype);
  // Seeded values in a fresh storage with the given strides.
  int rand(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, bool requires_grad = false,
           std::uint64_t seed = 1);
  int unary(program::OpId op, int x, bool grad_enabled = true) { return step(op, {x}, {}, grad_enabled); }
  int binary(program::OpId op, int x, int y) { return step(op, {x, y}); }
  int scalar(program::OpId op, int x, double value, bool grad_enabled = true);         // float scalar
  int int_scalar(program::OpId op, int x, std::int64_t value, bool grad_enabled = true);  // int scalar
  int clone(int x, program::MemoryFormat mf = program::MemoryFormat::Preserve);
  int select(int x, std::int64_t dim, std::int64_t index);
  int requires_grad_(int x, bool requires_grad = true);
  int deepcopy(int x, std::int64_t memo = 0);
  int backward(int x, bool retain_graph = false);
  program::Program done() const { return p_; }

 private:
  program::Program p_;
};

// ---- the registry (seed_claims.cpp) ------------------------------------------------------------------------

// Every claim of the seed files, in the order of the files and of the text within each.
const std::vector<Claim>& seed_claims();

}  // namespace parity::claims
