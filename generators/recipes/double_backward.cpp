#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::OpId;

// A backward that records itself (create_graph), then one through what it made: the gradient autograd.grad
// returns or the .grad it accumulated, reduced (or multiplied by the leaf first) and differentiated again, as
// gradgradcheck does. A first pass that does not retain its graph leaves the second one to reach freed nodes
// through the saved outputs its formulas read.
void double_backward(StepBuilder& gen) {
  const std::optional<OpOnLeaf> op = differentiable_op_on_leaf(gen);
  if (!op) return;
  const int leaf = op->leaf;
  const int s = gen.reduce(op->result);
  if (s < 0) return;
  const bool retain = gen.rng().chance(0.7);
  auto first = [retain](Attrs& a) {
    a.retain_graph = retain;
    a.create_graph = true;
  };
  int g = -1;
  if (gen.rng().chance(0.5)) {
    g = gen.emit(OpId::AutogradGrad, {s, leaf}, first);
  } else if (gen.emit(OpId::Backward, {s}, first) >= 0) {
    g = gen.emit(OpId::Grad, {leaf});
  }
  if (g < 0 || !gen.state().live(g)) return;
  int h = g;
  if (gen.rng().chance(0.3) && gen.meta(g).sizes == gen.meta(leaf).sizes) h = gen.emit(OpId::Mul, {g, leaf});
  const int s2 = gen.reduce(h);
  if (s2 < 0) return;
  if (gen.rng().chance(0.5)) gen.emit(OpId::AutogradGrad, {s2, leaf}, {}, true, true);
  else gen.emit(OpId::Backward, {s2}, {}, true, true);
  gen.emit(OpId::Grad, {leaf});
}

}  // namespace parity::generators::recipes
