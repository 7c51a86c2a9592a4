#include "cli/claims/claim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parity::cli::claims {

using judge::StepObs;
using judge::TensorObs;
using judge::Trace;

// ---- reading a trace ------------------------------------------------------------------------------------------

const StepObs& step_at(const Trace& t, int step) {
  if (step < 0 || static_cast<std::size_t>(step) >= t.steps.size())
    throw MissingObservation("the trace has no step " + std::to_string(step));
  return t.steps[static_cast<std::size_t>(step)];
}

bool succeeded(const Trace& t, int step) { return step_at(t, step).status == StepObs::Status::Ok; }

const TensorObs& seen(const Trace& t, int step, int value) {
  const StepObs& s = step_at(t, step);
  for (const auto& o : s.observed)
    if (o.value == value) return o;
  throw MissingObservation("step " + std::to_string(step) + " " + outcome_of(s) + " and did not observe value v" +
                           std::to_string(value));
}

const TensorObs& made(const Trace& t, int step) {
  const StepObs& s = step_at(t, step);
  if (s.status != StepObs::Status::Ok)
    throw MissingObservation("step " + std::to_string(step) + " " + outcome_of(s) + ": " +
                             s.message.substr(0, s.message.find('\n')));
  return seen(t, step, step);
}

// ---- rendering --------------------------------------------------------------------------------------------------

std::string num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string nums(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

std::string flag(bool b) { return b ? "true" : "false"; }

std::string grad_of(const TensorObs& o) { return o.grad ? nums(o.grad->values) : "None"; }

std::string grad_fn_of(const TensorObs& o) { return o.grad_fn.empty() ? "None" : o.grad_fn; }

std::string outcome_of(const StepObs& s) {
  switch (s.status) {
    case StepObs::Status::Ok: return "ran";
    case StepObs::Status::Skipped: return "was skipped";
    case StepObs::Status::Error: return "raised " + std::string(judge::to_string(s.category));
  }
  return "?";
}

bool all_equal(const std::vector<double>& v, double x) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [x](double e) { return e == x; });
}

bool shares_storage(const TensorObs& earlier, const TensorObs& later) { return later.alias_of == earlier.alias_of; }

}  // namespace parity::cli::claims
