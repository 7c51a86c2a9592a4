#include "engine/shrink.h"

#include <algorithm>
#include <chrono>

#include "engine/case_seed.h"

namespace parity::engine {

Shrunk shrink(const rc::Shrinkable<program::Program>& start, program::Program program, Evaluation ev,
              const judge::Signature& signature, const BatchEvaluator& evaluate, const ShrinkBudget& budget) {
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
        if (!e.divergence || judge::signature(programs[i], *e.divergence) != signature) continue;
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

reports::Finding case_finding(const reports::RunSummary& summary, std::uint64_t seed, std::uint64_t k,
                              const judge::Signature& sig) {
  reports::Finding f;
  f.parity_commit = summary.parity_commit;
  f.generator_version = summary.generator_version;
  f.libtorch_version = summary.libtorch_version;
  f.device = summary.device;
  f.oracle = summary.oracle;
  if (summary.backends) {
    f.impl_command = summary.backends->impl.command;
    f.oracle_command = summary.backends->oracle.command;
  }
  f.planted_faults = summary.planted_faults;
  f.seed = seed;
  f.case_index = k;
  f.case_seed = case_seed(seed, k);
  f.size = case_size(k);
  f.signature = sig;
  return f;
}

void shrink_into_finding(reports::Finding& f, rc::Shrinkable<program::Program> generated,
                         const program::Program& program, Evaluation ev, const BatchEvaluator& evaluate,
                         double allowance, const std::atomic<bool>* stop, int batch, reports::RunSummary& summary) {
  f.original_program_size = program.steps.size();
  f.program = program;
  if (ev.outcome != Evaluation::Outcome::Timeout) {
    if (allowance <= 0) {
      ++summary.unshrunk_findings;
    } else {
      const auto began = std::chrono::steady_clock::now();
      Shrunk s = shrink(std::move(generated), program, std::move(ev), f.signature, evaluate,
                        {kMaxShrinkEvaluations, std::min(kMaxShrinkSeconds, allowance), stop, batch});
      summary.shrink_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      f.program = std::move(s.program);
      f.shrink_evaluations = s.evaluations;
      ev = std::move(s.evaluation);
    }
  }
  f.divergence = *ev.divergence;
  f.severity = f.divergence.severity;
  f.impl_trace = std::move(ev.impl);
  f.oracle_trace = std::move(ev.oracle);
}

}  // namespace parity::engine
