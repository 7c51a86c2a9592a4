// How a process that ran programs ended, in one vocabulary for every caller: the child forked for a case
// (evaluation_process), a persistent campaign worker (worker_pool), another build's trace worker (trace_worker) and
// a claim's side (cli/claims). The words are the divergence kinds' (timeout, out_of_memory, crash), so what a
// finding says and what a command prints agree.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/isolation.h"

namespace parity::engine {

struct ProcessOutcome {
  enum class Kind : std::uint8_t {
    Answered,     // it wrote its whole answer (which may still say that the run failed)
    Interrupted,  // the run was being stopped: killed by the interrupt, not by a fault of its own
    Timeout,      // killed at its time limit
    OutOfMemory,  // an allocation failed under its memory limit (engine/evaluation_process.h)
    Crash,        // killed by a signal, or exited without its answer
  };
  Kind kind = Kind::Answered;
  std::string what;    // for a person: "killed by signal 11 (Segmentation fault)", "no result after 100 ms", ...
  std::string signal;  // a crash by a signal: its name (signal_name), which a crash's signature carries

  // "crash: killed by signal 11 (Segmentation fault)", "timeout: no result after 100 ms", "interrupted".
  std::string describe() const;
};

std::string_view to_string(ProcessOutcome::Kind);

// What `end` means. `out_of_memory`: the process marked a failed allocation before it died (Progress); an exit
// with kOutOfMemoryStatus says the same. `timeout` and `memory_limit_bytes` are the limits it ran under, for
// the words.
ProcessOutcome outcome_of(const ChildEnd& end, bool out_of_memory, std::chrono::milliseconds timeout,
                          std::size_t memory_limit_bytes);

// A process that answered, but not in a form the caller can read (it ended its answer early, or garbled it): a
// crash, with `why`.
ProcessOutcome unreadable_answer(const std::string& why);

}  // namespace parity::engine
