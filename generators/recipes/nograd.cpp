#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Meta;
using program::OpId;

// Grad mode switches: views made under no_grad, in-place on leaves under no_grad, then with grad on.
void nograd(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  switch (gen.rng().below(3)) {
    case 0: {  // a no_grad view written with grad on: fine with a scalar, raises with an operand needing grad
      int v = gen.view_of(x, false);
      if (gen.rng().chance(0.5)) {
        gen.write(v, true, true);
      } else {
        const Meta vm = gen.meta(v);
        int other = gen.fresh(vm.sizes, vm.dtype, true);
        if (other >= 0) gen.emit(OpId::Add_, {v, other}, {}, true, true);
      }
      break;
    }
    case 1:  // a leaf requiring grad written under no_grad: allowed, bumps its version
      gen.write(x, false);
      break;
    default:  // the same with grad on: raises
      gen.write(x, true, true);
      break;
  }
  int y = gen.emit(gen.rng().chance(0.5) ? OpId::Exp : OpId::MulScalar, {x});
  if (y < 0) return;
  int s = gen.reduce(y);
  if (s >= 0) gen.backward(s, 1);
}

}  // namespace parity::generators::recipes
