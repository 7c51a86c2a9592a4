// Test-only deliberate bugs in impl, switched on by the PARITY_PLANT environment variable. They let parity's
// own tests and demos drive the whole reporting path (shrinking, grouping, HTML, repros) with real
// divergences. A campaign records the faults it ran with (run.json and every finding: planted_faults), so a
// report of a planted run cannot be mistaken for one of impl.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "program/op_table.h"

namespace parity::impl_backend {

inline constexpr const char* kPlantVariable = "PARITY_PLANT";

struct PlantedFault {
  enum class Kind {
    Values,  // the op's result has 1 added to its first element (floating-point results); for a view op the
             // write lands in the storage it shares with its base, as a buggy view kernel's would
    Error,   // the op raises an `argument` error instead of running
    Message,  // when the op raises, its message has other words (same category): only message comparison sees it
    Fresh,    // an op that returns operand 0 itself (in-place ops, detach_, requires_grad_) returns another tensor
              // object over the same memory and version counter, with no autograd state: a wrapper that forgot
              // to `return self`. Storage aliasing still agrees; tensor identity does not.
    WritesInput,  // an op that writes none of its operands adds 1 to operand 0's first element, bumping no
                  // version: a kernel that used its input as scratch. Only schema conformance sees it at the step.
    Flaky,  // as Values, but in every other evaluation that runs the op, counted across the process and those it
            // forks (flaky_turn): the same program diverges on some runs and not others, as a race or
            // uninitialised memory would make it. What a campaign's confirming runs must catch.
    BreaksDevice,  // the op runs as it should, then the process's CUDA context counts as broken from there on
                   // (cuda_context_usable() is false), as after a device-side assert: a worker that ran a program
                   // with cuda steps must then answer its case and be replaced, losing none of the cases it held.
    // The process running the op misbehaves instead of running it, as a broken kernel would, for testing that
    // a campaign isolates it: one finding for exactly that case, and the cases after it run normally.
    Crash,        // SIGSEGV
    Abort,        // std::abort (SIGABRT)
    Hang,         // never returns (the case's time limit ends it)
    OutOfMemory,  // allocates more than the process's address-space limit (all of memory without one)
    // Combination faults: the op runs, and misbehaves only where two situations meet, as the bugs a generator
    // finds only by combining them (bench/detection_bench.cpp measures how fast campaigns do). Where the
    // condition holds, the first element of the result (float32 and float64) is overwritten: an edge value
    // (inf, NaN) plus one would be itself. Conditions: impl_backend/combination_faults.h.
    ViewWritten,        // operand 0 is a view of a storage written before (its version is not 0): view × write
    StaleRetainedView,  // retain_grad only: after each backward, a view retaining its grad whose storage was
                        // written since its retain_grad has a wrong .grad: retain_grad on a view × a write × backward
    EdgeScalar,         // the op's scalar is non-finite, -0, or outside the generator's small range [-2, 3]
    SharedStorage,      // an in-place op whose destination shares its storage with another operand (disjoint
                        // memory or not): what a too broad taint leaves uncompared
    ZeroDimOther,       // an in-place op whose other operand is 0-dim of another dtype than the destination
    GradMemo,           // deepcopy only: a tensor and its .grad deep-copied under one memo (either order) lose
                        // their link: the copy's .grad, or the copied .grad, is a fresh copy, not the memo's.
                        // Values agree; only identity and aliasing show it
  };
  program::OpId op;
  Kind kind;
  std::string text() const;  // "mul=values", as PARITY_PLANT spells it
  bool operator==(const PlantedFault&) const = default;
};

// Whether the fault ends or stalls the process running the op (Crash, Abort, Hang, OutOfMemory).
// Every kind's name, as PARITY_PLANT spells it after "OP=".
std::vector<std::string_view> planted_fault_kind_names();
bool is_process_fault(PlantedFault::Kind);
// Whether it is a combination fault (ViewWritten through GradMemo).
bool is_combination_fault(PlantedFault::Kind);
// For a Flaky fault: whether this evaluation (the caller asks once per evaluation) plants it. Turns alternate
// through a counter in memory shared with every process forked after PARITY_PLANT was parsed (planted_faults()).
bool flaky_turn();
// What a process-level fault does; does not return. Internal assert for another kind.
[[noreturn]] void misbehave(const PlantedFault& fault);

// Parses "mul=values,neg=error" (empty: none). Throws std::invalid_argument naming the item at fault, and for
// `fresh` on an op whose result is not operand 0, `writes_input` on an op with no operand or one that mutates,
// and a combination fault on an op its condition cannot hold for.
std::vector<PlantedFault> parse_planted_faults(std::string_view spec);
// The faults PARITY_PLANT asks for, parsed once. Throws std::invalid_argument when it is malformed.
const std::vector<PlantedFault>& planted_faults();
std::vector<std::string> planted_fault_texts();  // planted_faults() as text, for reports

}  // namespace parity::impl_backend
