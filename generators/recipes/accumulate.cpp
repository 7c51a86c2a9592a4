#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::OpId;

// Gradients accumulate over backward calls through a retained graph.
void accumulate(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  static const std::vector<OpId> unary = {OpId::Exp, OpId::MulScalar, OpId::Pow, OpId::AddScalar, OpId::Neg,
                                          OpId::Clone};
  int y = gen.emit(gen.rng().pick(unary), {x});
  if (y < 0) return;
  int s = gen.reduce(y);
  if (s >= 0) gen.backward(s, gen.rng().chance(0.7) ? 2 : 3);
}

}  // namespace parity::generators::recipes
