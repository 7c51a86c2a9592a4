#include "engine/shrink.h"

#include <chrono>

namespace parity::engine {

Shrunk shrink(const rc::Shrinkable<program::Program>& start, program::Program program, Evaluation ev,
              const program::Signature& signature, const Evaluator& evaluate, const ShrinkBudget& budget) {
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
    while (budget_left()) {
      auto candidate = shrinks.next();
      if (!candidate) break;
      program::Program p;
      try {
        p = (*candidate).value();
      } catch (const std::exception&) {
        continue;  // a shrink the generator cannot build is simply not a candidate
      }
      ++out.evaluations;
      Evaluation e = evaluate(p);
      if (e.outcome == Evaluation::Outcome::Interrupted) break;
      if (!e.divergence || program::signature(p, *e.divergence) != signature) continue;
      current = std::move(*candidate);
      out.program = std::move(p);
      out.evaluation = std::move(e);
      improved = true;
      break;
    }
  }
  return out;
}

}  // namespace parity::engine
