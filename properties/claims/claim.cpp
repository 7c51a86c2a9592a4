#include "properties/claims/claim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parity::claims {

using program::Attrs;
using program::OpId;
using program::StepObs;
using program::TensorObs;
using program::Trace;

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

std::string ints(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string flag(bool b) { return b ? "true" : "false"; }

std::string grad_of(const TensorObs& o) { return o.grad ? nums(o.grad->values) : "None"; }

std::string grad_fn_of(const TensorObs& o) { return o.grad_fn.empty() ? "None" : o.grad_fn; }

std::string outcome_of(const StepObs& s) {
  switch (s.status) {
    case StepObs::Status::Ok: return "ran";
    case StepObs::Status::Skipped: return "was skipped";
    case StepObs::Status::Error: return "raised " + std::string(program::to_string(s.category));
  }
  return "?";
}

bool all_equal(const std::vector<double>& v, double x) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [x](double e) { return e == x; });
}

bool shares_storage(const TensorObs& earlier, const TensorObs& later) { return later.alias_of == earlier.alias_of; }

bool own_storage(const TensorObs& o) { return o.alias_of == o.value; }

// ---- building ---------------------------------------------------------------------------------------------------

int Build::step(OpId op, std::vector<int> inputs, Attrs a, bool grad_enabled) {
  p_.steps.push_back(program::Step{op, std::move(inputs), std::move(a), grad_enabled});
  return static_cast<int>(p_.steps.size()) - 1;
}

int Build::full(std::vector<std::int64_t> sizes, double value, bool requires_grad, program::DType dtype) {
  Attrs a;
  a.sizes = std::move(sizes);
  a.scalar = {program::is_floating(dtype) ? program::Scalar::Kind::Float : program::Scalar::Kind::Int, value};
  a.dtype = dtype;
  a.requires_grad = requires_grad;
  return step(OpId::Full, {}, a);
}

int Build::ones(std::vector<std::int64_t> sizes, bool requires_grad) {
  Attrs a;
  a.sizes = std::move(sizes);
  a.requires_grad = requires_grad;
  return step(OpId::Ones, {}, a);
}

int Build::arange(std::int64_t end, program::DType dtype) {
  Attrs a;
  a.end = end;
  a.dtype = dtype;
  return step(OpId::Arange, {}, a);
}

int Build::rand(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, bool requires_grad,
                std::uint64_t seed) {
  Attrs a;
  a.sizes = std::move(sizes);
  a.strides = std::move(strides);
  a.requires_grad = requires_grad;
  a.seed = seed;
  return step(OpId::Rand, {}, a);
}

int Build::scalar(OpId op, int x, double value, bool grad_enabled) {
  Attrs a;
  a.scalar = {program::Scalar::Kind::Float, value};
  return step(op, {x}, a, grad_enabled);
}

int Build::int_scalar(OpId op, int x, std::int64_t value, bool grad_enabled) {
  Attrs a;
  a.scalar = {program::Scalar::Kind::Int, static_cast<double>(value)};
  return step(op, {x}, a, grad_enabled);
}

int Build::clone(int x, program::MemoryFormat mf) {
  Attrs a;
  a.memory_format = mf;
  return step(OpId::Clone, {x}, a);
}

int Build::select(int x, std::int64_t dim, std::int64_t index) {
  Attrs a;
  a.dim = dim;
  a.index = index;
  return step(OpId::Select, {x}, a);
}

int Build::requires_grad_(int x, bool requires_grad) {
  Attrs a;
  a.requires_grad = requires_grad;
  return step(OpId::RequiresGrad_, {x}, a);
}

int Build::deepcopy(int x, std::int64_t memo) {
  Attrs a;
  a.memo = memo;
  return step(OpId::Deepcopy, {x}, a);
}

int Build::backward(int x, bool retain_graph) {
  Attrs a;
  a.retain_graph = retain_graph;
  return step(OpId::Backward, {x}, a);
}

}  // namespace parity::claims
