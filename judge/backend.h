// A Backend runs Programs. Each adapter (impl, LibTorch) implements a Session: execute one step, observe one
// value. The loop that runs steps, catches errors and decides what to observe is written once (run).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "judge/exception_type.h"
#include "judge/trace.h"
#include "program/program.h"

namespace parity::judge {

// Thrown by a session for a step that raised: the backend's own category and message, and the C++ class of its
// exception where the backend names one (LibTorch and impl always; a protocol backend when it says).
struct StepError : std::runtime_error {
  StepError(ErrorCategory c, const std::string& msg, std::optional<ExceptionType> type = std::nullopt)
      : std::runtime_error(msg), category(c), exception(type) {}
  ErrorCategory category;
  std::optional<ExceptionType> exception;
};

// Thrown by a session whose backend itself failed (its process died or broke the protocol: protocol/): not a
// step's outcome, so judge::run lets it through, and the evaluator makes it a finding of its own kind.
struct SessionLost : std::runtime_error {
  enum class Kind { Crash, Protocol };
  SessionLost(Kind k, const std::string& msg) : std::runtime_error(msg), kind(k) {}
  Kind kind;
};

// What the run loop will read around a step it is about to run: the elements of `before` before it, and after it
// the elements of `read` and the whole observation of `observe` (with .grad when `grad`).
struct StepReads {
  std::vector<int> before, read, observe;
  bool grad = false;
};

class Session {
 public:
  virtual ~Session() = default;
  // Called before anything else of a step the loop runs. A session whose every call costs a round trip (a
  // protocol backend) may run the step here and answer what `reads` names from that one exchange.
  virtual void will_run(const program::Step& /*step*/, int /*index*/, const StepReads& /*reads*/) {}
  // Runs step `index` (its inputs exist). Throws StepError (or any std::exception) when the step raises.
  virtual void execute(const program::Step& step, int index) = 0;
  virtual bool has_value(int id) const = 0;
  virtual TensorObs observe(int id, bool with_values, bool with_grad) = 0;
  // What schema conformance compares around a step: the values in logical order. Unlike observe, it reads no
  // autograd state (reading a view's grad_fn may regenerate it).
  virtual std::vector<double> values(int id) const = 0;
  // Identity of the storage behind value `id`, for alias classes.
  virtual const void* storage_key(int id) const = 0;
  // Identity of the tensor itself (TensorImpl), and of its autograd view base (nullptr when not a view).
  virtual const void* tensor_key(int id) const = 0;
  virtual const void* base_key(int id) const = 0;
  // Identity of the storage behind value `id`'s .grad (nullptr when it has none).
  virtual const void* grad_storage_key(int id) const = 0;
  // Identity of value `id`'s .grad tensor itself (nullptr when it has none). The session keeps every gradient
  // it named alive, so that a later gradient never reuses its address and compares equal only when it is the
  // same tensor.
  virtual const void* grad_tensor_key(int id) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::unique_ptr<Session> start() = 0;
};

// What a trace keeps of each observed tensor's elements (and its gradient's): every value up to
// kFullValuesUpTo of them and a summary above (judge/value_summary.h), so that its memory does not grow with
// the elements the program makes; or every value (`parity run --full-values`), for a person to read.
enum class KeepValues { SummariseLarge, All };

Trace run(Backend& backend, const program::Program& program, KeepValues keep = KeepValues::SummariseLarge);

// A multi-output op's step keeps output `index`; both adapters refuse an index past the outputs the same way.
template <typename Outputs>
auto pick_output(const Outputs& outputs, std::int64_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= outputs.size())
    throw StepError(ErrorCategory::IndexRange, "the program keeps output " + std::to_string(index) + " of an op that returned " +
                                                   std::to_string(outputs.size()));
  return outputs[static_cast<std::size_t>(index)];
}

}  // namespace parity::judge
