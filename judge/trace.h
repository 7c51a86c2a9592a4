// What running a Program on one backend showed: per step, an outcome and observations of the values the step
// may have touched. Observations are plain data so that both backends' traces compare field by field.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/error_category.h"
#include "judge/exception_type.h"
#include "judge/value_summary.h"
#include "program/types.h"

namespace parity::judge {

struct GradObs {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  program::DType dtype = program::DType::Float32;
  // As TensorObs's; both empty when the gradient is not comparable (it flowed through uninitialised memory).
  std::vector<double> values;
  std::optional<ValueSummary> summary = {};
  int alias_of = -1;  // smallest live value id whose storage the gradient shares (a stolen user gradient), -1: none
  // Smallest live value id whose .grad lives in this gradient's storage (the value's own smallest id when no
  // other's does): a deep copy's gradient is its own, a memo's shared gradient is the original's.
  int grad_alias_of = -1;
  int same_as = -1;   // smallest live value id that is this very gradient tensor (a `grad` step's result), -1: none
  // How many times the value's .grad became another tensor object since the program first saw it defined:
  // backward accumulates into the same tensor in place, or replaces it (create_graph, a reset, an assignment).
  int replaced = 0;
  std::int64_t version = 0;  // the gradient's own version counter: AccumulateGrad adds in place, an op may write it
  bool operator==(const GradObs&) const = default;
};

struct TensorObs {
  int value = -1;  // value id observed
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  program::DType dtype = program::DType::Float32;
  std::string device = "cpu";
  bool requires_grad = false;
  bool is_leaf = true;
  bool retains_grad = false;  // retains_grad(): a non-leaf whose .grad backward fills (retain_grad() was called)
  std::string grad_fn;  // "" when none
  std::int64_t version = 0;
  int alias_of = -1;    // smallest live value id sharing this storage (itself when none earlier)
  int same_as = -1;     // smallest live value id that is this very tensor object, is_same (itself when none earlier)
  // Autograd view identity (`_is_view()`, `_base`): base is the live value id of the view's base, kBaseNotAValue
  // when the base is a tensor the program never named (made inside an op), -1 when not a view.
  bool is_view = false;
  int base = -1;
  bool contiguous = false, channels_last = false, channels_last_3d = false, non_overlapping_dense = false;
  bool values_defined = true;  // false for uninitialised memory (empty, empty_like)
  // The elements in logical row-major order; or, for more than kFullValuesUpTo of them, their summary and no
  // values (unless the run kept every value: KeepValues::All).
  std::vector<double> values;
  std::optional<ValueSummary> summary = {};
  std::optional<GradObs> grad;  // observed with every live value after a step that writes
  bool operator==(const TensorObs&) const = default;
};

struct StepObs {
  enum class Status { Ok, Error, Skipped };  // skipped: an input value does not exist (its step raised)
  Status status = Status::Ok;
  ErrorCategory category = ErrorCategory::Unclassified;
  std::string message;
  std::optional<ExceptionType> exception;  // the C++ class of what was thrown, where the backend names it
  std::vector<TensorObs> observed;
  // How the step broke its op's ATen schema on this backend (judge/schema_check.h); empty when it conforms.
  std::vector<std::string> schema_violations;
  bool operator==(const StepObs&) const = default;
};

struct Trace {
  std::string backend;  // "impl" or "libtorch"
  std::vector<StepObs> steps;
  bool operator==(const Trace&) const = default;
};

inline constexpr int kBaseNotAValue = -2;

// Observed tensors can have more dims than programs may ask for (advanced indexing adds them; a backend bug is data
// too), so what reads observations back (traces, protocol answers) has a generous rank limit rather than kMaxDims.
inline constexpr std::size_t kMaxObservedDims = 64;

std::string_view to_string(StepObs::Status);

// TensorObs::grad_fn when reading grad_fn raised (a view whose base was modified in a forbidden way).
inline std::string raised_marker(ErrorCategory c) { return "<raised " + std::string(to_string(c)) + ">"; }
// The category a raised_marker names; nullopt for any other grad_fn text.
inline std::optional<ErrorCategory> raised_marker_category(std::string_view grad_fn) {
  constexpr std::string_view open = "<raised ", close = ">";
  if (!grad_fn.starts_with(open) || !grad_fn.ends_with(close) || grad_fn.size() < open.size() + close.size())
    return std::nullopt;
  return parse_error_category(grad_fn.substr(open.size(), grad_fn.size() - open.size() - close.size()));
}

}  // namespace parity::judge
