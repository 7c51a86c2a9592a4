#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::OpId;

// .grad as a value, as PyTorch's tests use it: read after a backward, written in place (grad.zero_()), assigned
// or reset, then another backward accumulates into whatever .grad is by then (in place: the same tensor).
void grad_value(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  int y = gen.emit(gen.rng().pick({OpId::MulScalar, OpId::Sigmoid, OpId::Clone, OpId::Exp}), {x});
  if (y < 0) return;
  const bool nonleaf = gen.rng().chance(0.3);
  if (nonleaf) gen.emit(OpId::RetainGrad, {y});
  const int of = nonleaf ? y : x;
  int s = gen.reduce(y);
  if (s < 0) return;
  if (gen.emit(OpId::Backward, {s}, [](Attrs& a) { a.retain_graph = true; }) < 0) return;
  int g = gen.emit(OpId::Grad, {of});
  switch (gen.rng().below(4)) {
    case 0:
      if (g >= 0) gen.emit(gen.rng().pick({OpId::Zero_, OpId::MulScalar_, OpId::AddScalar_}), {g});
      break;
    case 1: gen.emit(OpId::ResetGrad, {of}); break;
    case 2: {
      int t = gen.fresh(gen.meta(of).sizes, gen.meta(of).dtype, gen.rng().chance(0.1));
      if (t >= 0) gen.emit(OpId::SetGrad, {of, t});
      break;
    }
    default:
      if (g >= 0) gen.emit(OpId::SetGrad, {of, gen.emit(OpId::Clone, {g})}, {}, true, true);
      break;
  }
  const bool retain = gen.rng().chance(0.5);
  gen.emit(OpId::Backward, {s}, [retain](Attrs& a) { a.retain_graph = retain; }, true, true);
  gen.emit(OpId::Grad, {of});
}

}  // namespace parity::generators::recipes
