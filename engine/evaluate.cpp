#include "engine/evaluate.h"

#include "engine/evaluation_process.h"
#include "engine/isolation.h"

namespace parity::engine {

Evaluation evaluate_isolated(const program::Program& program, const EvalOptions& options) {
  static Progress* const progress = map_shared_progress(1);
  progress->reset();
  const ChildEnd end = run_isolated(
      [&] {
        enter_evaluating_process(options.memory_limit_bytes, progress);
        return evaluate_to_text(program, options.want_traces, options.keep_values, options.oracle, options.sides,
                                *progress);
      },
      options.timeout, options.stop);
  return evaluation_from_end(end, &program, options, *progress);
}

Evaluation evaluate_in_process(const program::Program& program, bool want_traces, reports::Oracle oracle,
                               const EvalSides& sides) {
  Progress progress;  // nobody watches it: there is no child to lose
  ChildEnd end;
  end.output = evaluate_to_text(program, want_traces, judge::KeepValues::SummariseLarge, oracle, sides, progress);
  EvalOptions options;
  options.oracle = oracle;
  options.sides = sides;
  return evaluation_from_end(end, &program, options, progress);
}

}  // namespace parity::engine
