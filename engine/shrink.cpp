#include "engine/shrink.h"

#include <algorithm>
#include <chrono>

namespace parity::engine {

Shrunk shrink(const rc::Shrinkable<program::Program>& start, program::Program program, Evaluation ev,
              const program::Signature& signature, const BatchEvaluator& evaluate, const ShrinkBudget& budget) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(budget.max_seconds);
  Shrunk out{std::move(program), std::move(ev), 0};
  auto budget_left = [&] {
    return out.evaluations < budget.max_evaluations && Clock::now() < deadline &&
           !(budget.stop && budget.stop->load());
  };
  rc::Shrinkable<program::Program> current = start;
  bool improved = true;
  while (improved && budget_left()) {
    improved = false;
    auto shrinks = current.shrinks();
    bool exhausted = false;
    while (!improved && !exhausted && budget_left()) {
      // The next batch, never past the evaluation budget.
      const int room = std::min(std::max(budget.batch, 1), budget.max_evaluations - out.evaluations);
      std::vector<rc::Shrinkable<program::Program>> candidates;
      std::vector<program::Program> programs;
      while (static_cast<int>(programs.size()) < room) {
        auto candidate = shrinks.next();
        if (!candidate) {
          exhausted = true;
          break;
        }
        try {
          programs.push_back((*candidate).value());
        } catch (const std::exception&) {
          continue;  // a shrink the generator cannot build is simply not a candidate
        }
        candidates.push_back(std::move(*candidate));
      }
      if (programs.empty()) break;
      std::vector<Evaluation> results = evaluate(programs);
      for (std::size_t i = 0; i < results.size(); ++i) {
        Evaluation& e = results[i];
        if (e.outcome == Evaluation::Outcome::Interrupted) return out;
        if (!e.divergence || program::signature(programs[i], *e.divergence) != signature) continue;
        out.evaluations += static_cast<int>(i) + 1;
        current = std::move(candidates[i]);
        out.program = std::move(programs[i]);
        out.evaluation = std::move(e);
        improved = true;
        break;
      }
      if (!improved) out.evaluations += static_cast<int>(programs.size());
    }
  }
  return out;
}

}  // namespace parity::engine
