#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::OpId;

// Two or three things happen to one tensor, in a random order, then a backward goes through it: retain_grad, an
// in-place write through a view of it, on it, through its detached alias or through a view made under no_grad,
// an op saving it. Each alone is common; on the same tensor they are where bugs hide (a retained gradient after
// writes through a view and then the base; a saved tensor written through an alias autograd does not see).
void interaction(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  const int y = gen.rng().chance(0.85) ? gen.emit(gen.rng().pick({OpId::MulScalar, OpId::Clone, OpId::AddScalar, OpId::Neg}), {x}) : x;
  if (y < 0) return;
  std::vector<int> events = {0, 1, 2, 3, 4, 5};
  gen.rng().shuffle(events);
  events.resize(static_cast<std::size_t>(gen.rng().range(2, 3)));
  int last = y;  // what the backward goes through: y, or a result that saved it
  for (int e : events) {
    switch (e) {
      case 0: gen.emit(OpId::RetainGrad, {y}, {}, true, true); break;
      case 1: gen.write(gen.view_of(y, true, gen.rng().chance(0.8)), true, true); break;
      case 2: gen.write(y, true, true); break;
      case 3: {
        int alias = gen.emit(gen.rng().chance(0.5) ? OpId::Detach : OpId::Data, {y});
        if (alias >= 0) gen.write(gen.rng().chance(0.3) ? gen.view_of(alias, false) : alias, gen.rng().chance(0.5), true);
        break;
      }
      case 4: gen.write(gen.view_of(y, false), gen.rng().chance(0.3), true); break;
      default: {
        int saver = gen.rng().chance(0.5) ? gen.emit(gen.rng().pick(unary_saving(program::Saves::Self, false)), {y})
                                     : gen.emit(OpId::Mul, {y, gen.fresh(gen.meta(y).sizes, gen.meta(y).dtype, gen.rng().chance(0.5))});
        if (saver >= 0) last = saver;
        break;
      }
    }
  }
  if (!gen.state().live(last)) last = y;
  int s = gen.reduce(last);
  if (s >= 0) gen.backward(s, gen.rng().chance(0.25) ? 2 : 1);
  if (gen.state().value(y).retains_grad || gen.state().value(y).leaf) gen.emit(OpId::Grad, {y}, {}, true, true);
}

}  // namespace parity::generators::recipes
