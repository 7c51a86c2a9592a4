// Runs one program on impl and on its oracle (LibTorch, or impl on the CPU: reports/oracle.h) in another process,
// so that a crash, a hang or a runaway allocation of either is a finding rather than the end of the campaign: a
// child forked for the one case here, a persistent worker in engine/worker_pool.h. The parent never runs a
// backend: no torch or OpenMP state exists in it when it forks.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/isolation.h"
#include "judge/backend.h"
#include "judge/compare.h"
#include "judge/coverage.h"
#include "judge/observation.h"
#include "judge/trace.h"
#include "program/program.h"
#include "reports/oracle.h"

namespace parity::engine {

// One step's op and its outcome on both sides, kept for every case so a campaign can count what it exercised
// without the program.
struct StepOutcome {
  program::OpId op{};
  judge::StepObs::Status impl = judge::StepObs::Status::Ok;
  judge::StepObs::Status oracle = judge::StepObs::Status::Ok;
  judge::ErrorCategory impl_category = judge::ErrorCategory::Unclassified;
  judge::ErrorCategory oracle_category = judge::ErrorCategory::Unclassified;
};

struct Evaluation {
  enum class Outcome { Completed, Crash, Timeout, OutOfMemory, Interrupted };
  Outcome outcome = Outcome::Completed;
  // Completed: the first difference, if any. Crash/Timeout/OutOfMemory: a divergence of that kind at the step
  // running when the process died or was killed.
  std::optional<judge::Divergence> divergence;
  std::vector<StepOutcome> steps;         // Completed only: one per step of the program, in order
  judge::CoverageTags coverage;         // Completed only: what the case exercised, judged on LibTorch
  std::optional<judge::Trace> impl;     // Completed, when asked for or when diverging
  std::optional<judge::Trace> oracle;
  std::string impl_version, oracle_version;
};

// The memory limit of every evaluating process unless told otherwise (`--memory-mb` of each command): far above
// what a generated case needs, far below what makes a machine swap.
inline constexpr std::size_t kDefaultMemoryLimitBytes = std::size_t{4} << 30;

// The two sides beyond reports::Oracle: a protocol backend (docs/backend-protocol.md) started from a command for
// either, and what both sides observe (what the other leaves out is not compared).
struct EvalSides {
  std::string impl_cmd, oracle_cmd;  // empty: in-process impl, and the oracle reports::Oracle names
  std::chrono::milliseconds start_timeout{30000};  // of a protocol backend's handshake
  judge::Observations compared;
  bool operator==(const EvalSides&) const = default;
};

struct EvalOptions {
  std::chrono::milliseconds timeout{10000};
  bool want_traces = false;
  const std::atomic<bool>* stop = nullptr;  // when set, the child is killed and the outcome is Interrupted
  // Address space of the evaluating process; 0: no limit (engine/evaluation_process.h).
  std::size_t memory_limit_bytes = kDefaultMemoryLimitBytes;
  // What the traces keep of large tensors' values (want_traces: what the caller gets; the comparison is the same).
  judge::KeepValues keep_values = judge::KeepValues::SummariseLarge;
  reports::Oracle oracle = reports::Oracle::LibTorch;  // what judges impl
  EvalSides sides;
};

// Throws EvaluationError when the machinery fails.
Evaluation evaluate_isolated(const program::Program& program, const EvalOptions& options);

// The same evaluation in this process, through the same result text a child sends: no time limit, and a crash
// or a hang of a backend is the caller's. For tests, and for programs known to be harmless; a process that
// forks children later (evaluate_isolated) then forks with torch state in it. Throws EvaluationError when a
// backend is missing.
Evaluation evaluate_in_process(const program::Program& program, bool want_traces = false,
                               reports::Oracle oracle = reports::Oracle::LibTorch, const EvalSides& sides = {});

}  // namespace parity::engine
