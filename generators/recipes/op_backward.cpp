#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::OpId;

// One differentiable op, then a backward through it: every op's derivative gets run.
void op_backward(StepBuilder& gen) {
  const std::optional<OpOnLeaf> op = differentiable_op_on_leaf(gen);
  if (!op) return;
  const int s = gen.reduce(op->result);
  if (s < 0) return;
  gen.backward(s, 1);
  gen.emit(OpId::Grad, {op->leaf});  // the gradient as a value: its version shows the in-place ops its formula ran
}

}  // namespace parity::generators::recipes
