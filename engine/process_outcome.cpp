#include "engine/process_outcome.h"

#include "engine/evaluation_process.h"
#include "program/internal_assert.h"

namespace parity::engine {

std::string_view to_string(ProcessOutcome::Kind k) {
  switch (k) {
    case ProcessOutcome::Kind::Answered: return "answered";
    case ProcessOutcome::Kind::Interrupted: return "interrupted";
    case ProcessOutcome::Kind::Timeout: return "timeout";
    case ProcessOutcome::Kind::OutOfMemory: return "out_of_memory";
    case ProcessOutcome::Kind::Crash: return "crash";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this ProcessOutcome::Kind");
}

std::string ProcessOutcome::describe() const {
  if (kind == Kind::Interrupted || what.empty()) return std::string(to_string(kind));
  return std::string(to_string(kind)) + ": " + what;
}

ProcessOutcome outcome_of(const ChildEnd& end, bool out_of_memory, std::chrono::milliseconds timeout,
                          std::size_t memory_limit_bytes) {
  ProcessOutcome out;
  switch (end.how) {
    case ChildEnd::How::Finished: return out;
    case ChildEnd::How::Interrupted:
      out.kind = ProcessOutcome::Kind::Interrupted;
      out.what = end.describe(timeout);
      return out;
    case ChildEnd::How::Timeout:
      out.kind = ProcessOutcome::Kind::Timeout;
      out.what = end.describe(timeout);
      return out;
    case ChildEnd::How::Signal:
    case ChildEnd::How::Exit:
      if (out_of_memory || (end.how == ChildEnd::How::Exit && end.code == kOutOfMemoryStatus)) {
        out.kind = ProcessOutcome::Kind::OutOfMemory;
        out.what = "an allocation failed under the memory limit of " + std::to_string(memory_limit_bytes >> 20) +
                   " MiB";
        return out;
      }
      out.kind = ProcessOutcome::Kind::Crash;
      out.what = end.describe(timeout);
      if (end.how == ChildEnd::How::Signal) out.signal = signal_name(end.code);
      return out;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this ChildEnd::How");
}

ProcessOutcome unreadable_answer(const std::string& why) {
  ProcessOutcome out;
  out.kind = ProcessOutcome::Kind::Crash;
  out.what = "ended without a complete result (" + why.substr(0, 200) + ")";
  return out;
}

}  // namespace parity::engine
