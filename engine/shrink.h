// The shrinking driver: a diverging case is made smaller while it still diverges the same way (same
// signature), so that a finding shows the fewest steps that still show the bug.
#pragma once
#include <atomic>
#include <functional>
#include <vector>

#include <rapidcheck.h>

#include "engine/evaluate.h"
#include "program/program.h"
#include "program/signature.h"

namespace parity::engine {

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
              const program::Signature& signature, const BatchEvaluator& evaluate, const ShrinkBudget& budget = {});

}  // namespace parity::engine
