// The shrinking driver: a diverging case is made smaller while it still diverges the same way (same
// signature), so that a finding shows the fewest steps that still show the bug.
#pragma once
#include <atomic>
#include <functional>
#include <vector>

#include <rapidcheck.h>

#include "engine/evaluate.h"
#include "judge/signature.h"
#include "program/program.h"
#include "reports/finding.h"
#include "reports/run_summary.h"

namespace parity::engine {

inline constexpr int kMaxShrinkEvaluations = 200;  // per finding
inline constexpr double kMaxShrinkSeconds = 60;    // per finding

// How candidates are judged: a batch at a time (side by side in a campaign's workers), one Evaluation each, in
// order.
using BatchEvaluator = std::function<std::vector<Evaluation>(const std::vector<program::Program>&)>;

struct ShrinkBudget {
  int max_evaluations = 200;
  // Candidates that hang cost a full time limit each: a shrink also stops after this long, keeping its best.
  double max_seconds = 60;
  const std::atomic<bool>* stop = nullptr;  // when it turns true the shrink stops, keeping its best
  int batch = 1;  // candidates evaluated together (a campaign's worker count)
};

struct Shrunk {
  program::Program program;  // the smallest program found that diverges with the signature
  Evaluation evaluation;     // its evaluation
  int evaluations = 0;       // candidates evaluated
};

// Greedy descent through the generator's shrinks of `start` (whose value is `program`, evaluated as `ev`):
// take the first candidate that still diverges with `signature`, start again from it, until no candidate does
// (a local minimum) or the budget is spent. A candidate the generator cannot build is skipped, uncounted.
// Candidates go to `evaluate` in batches, and the first of a batch that diverges with the signature is taken:
// the same choice, and the same count of evaluations (those up to the one taken), as one at a time, so the result
// does not depend on the batch size.
Shrunk shrink(const rc::Shrinkable<program::Program>& start, program::Program program, Evaluation ev,
              const judge::Signature& signature, const BatchEvaluator& evaluate, const ShrinkBudget& budget = {});

// The finding of a run's case k (seed `seed`) with signature `sig`, before shrinking: what the run's summary says
// of the build, the generator and LibTorch, and how to generate the case again.
reports::Finding case_finding(const reports::RunSummary& summary, std::uint64_t seed, std::uint64_t k,
                              const judge::Signature& sig);

// A run's diverging case (`program`, generated as `generated`, evaluated as `ev`) made into finding `f` (whose
// signature is set): the smallest program that diverges with that signature, the evaluations spent, the
// divergence and both traces. `allowance`: seconds of the run's shrinking budget left; none left records the
// case as found (summary.unshrunk_findings). A hang is never shrunk: every candidate could cost a full time
// limit. The time spent is added to summary.shrink_seconds. Used by campaigns and drift runs alike.
void shrink_into_finding(reports::Finding& f, rc::Shrinkable<program::Program> generated,
                         const program::Program& program, Evaluation ev, const BatchEvaluator& evaluate,
                         double allowance, const std::atomic<bool>* stop, int batch, reports::RunSummary& summary);

}  // namespace parity::engine
