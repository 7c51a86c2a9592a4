#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::DType;
using program::OpId;

// Leaves of every layout get gradients: the layout contract of AccumulateGrad, user gradients of other
// dtypes or broadcast shapes, accumulation over backward calls through a retained graph.
void gradient(StepBuilder& gen) {
  DType d = gen.floating();
  int x = gen.emit(OpId::Rand, {}, [d](Attrs& a) {
    a.dtype = d;
    a.requires_grad = true;
  });
  if (x < 0) return;
  static const std::vector<OpId> unary = {OpId::MulScalar, OpId::Sigmoid, OpId::Tanh, OpId::Clone, OpId::Abs,
                                          OpId::Relu, OpId::Neg, OpId::Permute, OpId::Transpose};
  int y = gen.emit(gen.rng().pick(unary), {x});
  if (y < 0) y = x;
  if (gen.rng().chance(0.3)) gen.emit(OpId::RetainGrad, {y}, {}, true, true);
  const int times = gen.rng().chance(0.5) ? 2 : 1;
  for (int t = 0; t < times; ++t) {
    const bool retain = t + 1 < times;
    if (gen.rng().chance(0.6)) {
      std::vector<std::int64_t> shape = gen.meta(y).sizes;
      if (gen.rng().chance(0.25)) shape.insert(shape.begin(), gen.rng().range(1, 2));  // summed down to y's shape
      // A gradient summed down to y's shape is reduced in its own dtype: not a 16-bit one (kReducibleTypes).
      DType gd = gen.rng().chance(0.8) ? gen.meta(y).dtype : gen.floating();
      if (shape != gen.meta(y).sizes && !program::allows(program::kReducibleTypes, gd)) gd = DType::Float32;
      int g = gen.fresh(shape, gd, gen.rng().chance(0.2));
      auto keep = [retain](Attrs& a) { a.retain_graph = retain; };
      // Now and then autograd.grad with grad_outputs, which returns x's gradient instead of accumulating it.
      if (g < 0 || (gen.rng().chance(0.3) ? gen.emit(OpId::AutogradGradOutputs, {y, x, g}, keep)
                                      : gen.emit(OpId::BackwardGrad, {y, g}, keep)) < 0)
        return;
    } else {
      int s = gen.reduce(y);
      if (s < 0 || gen.emit(OpId::Backward, {s}, [retain](Attrs& a) { a.retain_graph = retain; }) < 0) return;
    }
  }
}

}  // namespace parity::generators::recipes
