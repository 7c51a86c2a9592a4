// Mutations of programs, for coverage guidance: the campaign keeps the programs that reached a coverage key no
// case before them had (engine/corpus.h) and runs mutants of them beside generated programs. Each mutation puts
// one situation more beside what the program already does, on another tensor or role, so that combinations no
// recipe was written for grow out of programs that reached their parts (libFuzzer's and Hypothesis's corpus
// mutation, with the generator's own step helpers as the edits).
#pragma once
#include <optional>

#include "generators/program_gen.h"
#include "generators/rng.h"
#include "program/program.h"

namespace parity::generators {

enum class Mutation {
  Extend,       // more steps after the last: a recipe and random steps
  SwapOperand,  // one step's operand replaced by a view of it, a sibling view, a copy (clone, detach) or its .grad;
                // or a later operand by such an alias of operand 0 (a source sharing the destination's storage)
  RetainView,   // retain_grad on a view a step then reads (one it read, or a new view in an operand's place), and
                // now and then a write to its base after it
  WriteBefore,  // an in-place write just before a step: into what it reads or that view's base (a view × a write to
                // its storage), or before a backward into an earlier step's operand (a second saved tensor modified)
  EdgeScalar,   // one step's scalar moved to an edge of its dtype (generators/boundary_values.h)
  ZeroDimOperand,  // one step's operand after the first replaced by a fresh 0-dim tensor of another dtype
  // Each of these puts one step in one operand situation of judge/operand_class.h, where coverage guidance aims
  // a mutant at an op that never met it (engine/corpus.h); SwapOperand and WriteBefore reach them only now and then.
  WrittenView,    // an operand replaced by a view of it whose storage is then written (a view operand: its storage
                  // written): the step reads a view of a written storage
  SharedOperand,  // a later operand replaced by an alias of operand 0: a destination sharing its source's storage
  GradOperand,    // an operand replaced by its .grad, where a backward may have filled it
  MemoView,       // before a deepcopy, a deepcopy under its memo of a view of its operand: one storage, one memo
  MemoGrad,       // before a deepcopy, a deepcopy under its memo of its operand's .grad (after a backward that fills
                  // it, where none did), or of the tensor whose .grad its operand is
};
inline constexpr int kMutationCount = 11;

// A mutant has at most GenConfig::max_steps plus this many steps; a program with no room left for a mutation's
// steps only has a scalar changed. A case's cost grows faster than its length (every step observes every live
// value), so mutants of mutants must not grow without end.
inline constexpr int kGrowthSteps = 2;

// `p` mutated, deterministically in `rng`'s state: a mutation is drawn and applied, a few times over until one
// applies. The steps after the point of change are kept only where the generator admits each as it now stands
// (StepBuilder::admits: no undefined step, no false alarm from rounding); nullopt when no draw gives such a
// program (the caller generates one instead).
std::optional<program::Program> mutate(const program::Program& p, Rng& rng, const GenConfig& cfg);

// One mutation of `p`, at a point drawn from `rng`; nullopt when it does not apply there (no operand to swap, no
// scalar, no tensor requiring grad) or leaves a later step the generator does not admit.
std::optional<program::Program> mutate_with(const program::Program& p, Mutation m, Rng& rng, const GenConfig& cfg);
// The same at step `at` (p.steps.size(): after the last, for Extend and RetainView only).
std::optional<program::Program> mutate_at(const program::Program& p, Mutation m, int at, Rng& rng,
                                          const GenConfig& cfg);

}  // namespace parity::generators
