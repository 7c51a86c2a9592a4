// The two halves of evaluating a program in another process, shared by the fork-per-case mode
// (evaluate_isolated) and the persistent workers (engine/worker_pool.h): what the evaluating process does
// (limits itself, runs both backends, answers with one JSON text) and how its parent turns that text, or the way
// the process ended, into an Evaluation.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "engine/evaluate.h"
#include "engine/isolation.h"
#include "judge/backend.h"
#include "program/program.h"

namespace parity::engine {

// Where the evaluating process is, in memory shared with the parent: when it dies or hangs, the parent still
// knows which backend and which step it was in, and whether it ran out of memory, and can name the op in the
// finding's signature.
enum Phase : int { kStarting = 0, kImpl = 1, kOracle = 2, kComparing = 3 };
struct Progress {
  std::atomic<int> phase{kStarting};
  std::atomic<int> step{-1};
  std::atomic<int> out_of_memory{0};
  void reset() {
    phase = kStarting;
    step = -1;
    out_of_memory = 0;
  }
};
static_assert(std::atomic<int>::is_always_lock_free);

// `count` Progress slots in anonymous shared memory, inherited by every process forked later; never unmapped.
// Throws EvaluationError.
Progress* map_shared_progress(int count);

// Called first in a freshly forked evaluating process. With a limit (bytes, 0 for none) the process's address
// space is capped there, and an allocation that fails ends the process with kOutOfMemoryStatus after marking
// `progress`: the case is then an out_of_memory finding instead of a worker that carries on in an unknown
// state, or a machine that swaps. Every backend allocation reaches that end: operator new calls the
// new-handler installed here, and impl's and LibTorch's tensor allocators call it too when they fail. An
// address-space cap bounds the resident memory as well (a resident page is a mapped one), so no watch of the
// resident set is needed besides, except where no cap can be set: see kAddressSpaceLimitSupported.
// It also keeps the process's heap from growing across cases: a block of kLargeBlockBytes or more is always
// mapped on its own and returned to the system when freed (glibc's default threshold, made fixed).
inline constexpr int kOutOfMemoryStatus = 86;
inline constexpr std::size_t kLargeBlockBytes = std::size_t{128} << 10;
void enter_evaluating_process(std::size_t memory_limit_bytes, Progress* progress);

// Whether this build can cap an evaluating process's address space. An AddressSanitizer build cannot: ASan
// reserves terabytes of address space for its shadow memory when the process starts, so any cap ends the
// process at its next mapping. There enter_evaluating_process applies no cap, whatever the limit, and the
// commands say so on stderr (cli/memory_limit.h).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSpaceLimitSupported = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSpaceLimitSupported = false;
#else
inline constexpr bool kAddressSpaceLimitSupported = true;
#endif
#else
inline constexpr bool kAddressSpaceLimitSupported = true;
#endif

// The evaluating process's whole work for one program: impl and `oracle` (or the protocol backends `sides` names,
// each one process kept for the evaluating process's life), the comparison, and the result as one
// JSON text. Never throws: a broken setup is a {"fatal": ...} the parent raises as EvaluationError.
std::string evaluate_to_text(const program::Program& program, bool want_traces, judge::KeepValues keep,
                             reports::Oracle oracle, const EvalSides& sides, Progress& progress);

// LibTorch alone on `program` (`parity drift` compares two releases' traces): {"libtorch_version", "trace"}, or
// {"libtorch_version", "escaped": message} for an exception that escaped the run loop. Never throws: a broken
// setup is a {"fatal": ...}.
std::string oracle_trace_to_text(const program::Program& program, Progress& progress);

// The parent's reading of how the evaluating process ended (`end`) and what it said: a finished one's text is
// parsed and checked against `program` (null for a program the evaluating process generated itself: the ops its
// answer lists then stand for it); a crash, a hang, an exhausted memory limit or a cut-short answer becomes a
// divergence at the step `progress` names. Throws EvaluationError for a {"fatal": ...} answer.
Evaluation evaluation_from_end(const ChildEnd& end, const program::Program* program, const EvalOptions& options,
                               const Progress& progress);

}  // namespace parity::engine
