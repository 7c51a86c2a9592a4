#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::DType;
using program::OpId;
using program::Step;

// requires_grad_ on non-leaves (both values) and integer tensors, retain_grad, .grad of non-leaves.
void flags(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  int y = gen.emit(gen.rng().pick({OpId::MulScalar, OpId::Sigmoid, OpId::Clone}), {x});
  if (y < 0) return;
  switch (gen.rng().below(5)) {
    case 4: {
      // x.data = t (or y's) after x joined y's graph: that graph's accumulator keeps x's old shape and dtype,
      // an op after it makes a new one when the dtype changed.
      std::vector<std::int64_t> shape = gen.meta(x).sizes;
      if (gen.rng().chance(0.2)) shape.insert(shape.begin(), 1);
      int t = gen.fresh(shape, gen.rng().chance(0.7) ? gen.meta(x).dtype : gen.floating(), false);
      if (t >= 0) gen.emit(OpId::SetData, {gen.rng().chance(0.8) ? x : y, t}, {}, true, true);
      if (gen.rng().chance(0.5)) {
        int z = gen.emit(OpId::MulScalar, {x});
        int s2 = z < 0 ? -1 : gen.reduce(z);
        if (s2 >= 0) gen.backward(s2, 1);
      }
      break;
    }
    case 0: gen.emit(OpId::RequiresGrad_, {y}, [](Attrs& a) { a.requires_grad = true; }, true, true); break;
    case 1: gen.emit(OpId::RequiresGrad_, {y}, [](Attrs& a) { a.requires_grad = false; }, true, true); break;
    case 2: {
      int i = gen.emit(OpId::Arange, {}, [](Attrs& a) { a.dtype = DType::Int64; });
      if (i >= 0 && gen.room() && gen.config().invalid_share > 0) {  // ill-typed on purpose: only floating tensors may require grad
        Step s{OpId::RequiresGrad_, {i}, {}, true};
        s.attrs.requires_grad = true;
        gen.append(s);
      }
      break;
    }
    default: gen.emit(OpId::RetainGrad, {y}); break;
  }
  int s = gen.reduce(y);
  if (s >= 0) gen.backward(s, 1);
}

}  // namespace parity::generators::recipes
