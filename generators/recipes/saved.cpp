#include <utility>
#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Meta;
using program::OpId;

// An op saves a tensor for backward; the tensor is written in place (itself, through a view, or through
// its detached alias); backward must raise a version error. Variants where nothing saved is written must not.
// When the node saves two tensors, both may be written: which one the error names is the order in which the
// node unpacks them.
void saved(StepBuilder& gen) {
  int x = gen.rg_leaf();
  if (x < 0) return;
  const Meta xm = gen.meta(x);
  int y = -1, target = -1, second = -1;
  bool grad_write = gen.rng().chance(0.8);
  const int variant = gen.rng().below(12);
  switch (variant) {
    case 10: {  // mul and mm of two non-leaves requiring grad save both
      int a = gen.emit(OpId::MulScalar, {x});
      int leaf = gen.fresh(xm.sizes, xm.dtype, true);
      int b = leaf < 0 ? -1 : gen.emit(OpId::Clone, {leaf});
      if (a < 0 || b < 0) return;
      const bool square = xm.sizes.size() == 2 && xm.sizes[0] == xm.sizes[1];
      y = gen.emit(square && gen.rng().chance(0.4) ? OpId::Mm : OpId::Mul, {a, b});
      target = a, second = b;
      if (gen.rng().chance(0.5)) std::swap(target, second);  // written first
      break;
    }
    case 0:  // exp, sigmoid, tanh and relu save their result
      y = target = gen.emit(gen.rng().pick(unary_saving(program::Saves::Result, false)), {x});
      break;
    case 6: {  // ... and so do their in-place forms, on a non-leaf
      int xn = gen.emit(OpId::MulScalar, {x});
      y = target = xn < 0 ? -1 : gen.emit(gen.rng().pick(unary_saving(program::Saves::Result, true)), {xn});
      break;
    }
    case 7:
    case 11: {  // abs, clamp and pow save their input, or (11) a view of it: one version counter with the base
      int xn = gen.rng().chance(0.5) ? gen.emit(OpId::MulScalar, {x}) : gen.emit(OpId::Clone, {x});
      const int in = xn < 0 || variant == 7 ? xn : gen.view_of(xn, true, /*single_output=*/true);
      y = in < 0 ? -1 : gen.emit(gen.rng().pick(unary_saving(program::Saves::Self, false)), {in});
      target = xn;
      break;
    }
    case 8: {  // abs_ and clamp_ save a copy of their input's value: writing their result later must not raise
      int xn = gen.emit(OpId::Clone, {x});
      y = target = xn < 0 ? -1 : gen.emit(gen.rng().pick(unary_saving(program::Saves::Self, true)), {xn});
      break;
    }
    case 9: {  // mm saves each operand only for the other's gradient
      const auto n = gen.rng().range(0, 3), k = gen.rng().range(1, 3), p = gen.rng().range(1, 3);
      const bool swap = gen.rng().chance(0.5);  // the operand requiring grad on the right: b [p, n] @ a [n, k]
      int a = gen.fresh({n, k}, xm.dtype, true);
      int b = swap ? gen.fresh({p, n}, xm.dtype, false) : gen.fresh({k, p}, xm.dtype, false);
      y = a < 0 || b < 0 ? -1 : gen.emit(gen.rng().chance(0.5) ? OpId::Mm : OpId::Matmul, swap ? std::vector<int>{b, a} : std::vector<int>{a, b});
      target = gen.rng().chance(0.5) ? a : b;
      grad_write = target == b;  // writing the rg leaf needs no_grad
      break;
    }
    case 1: {  // pow saves its input: a non-leaf copy of x, so that it may be written
      int xn = gen.rng().chance(0.5) ? gen.emit(OpId::MulScalar, {x}) : gen.emit(OpId::Clone, {x});
      y = gen.emit(OpId::Pow, {xn});
      target = xn;
      break;
    }
    case 2: {  // mul/div by a tensor not requiring grad save that tensor
      int c = gen.fresh(xm.sizes, xm.dtype, false);
      y = gen.emit(gen.rng().chance(0.6) ? OpId::Mul : OpId::Div, {x, c});
      target = c;
      break;
    }
    case 3: {  // add/sub save nothing
      int c = gen.fresh(xm.sizes, xm.dtype, false);
      y = gen.emit(gen.rng().chance(0.5) ? OpId::Add : OpId::Sub, {x, c});
      target = c;
      break;
    }
    case 4: {  // add of a scalar saves nothing
      int xn = gen.emit(OpId::Clone, {x});
      y = gen.emit(OpId::AddScalar, {xn});
      target = xn;
      break;
    }
    default: {  // mul by a tensor not requiring grad does not save x: writing x (under no_grad) is fine
      int c = gen.fresh(xm.sizes, xm.dtype, false);
      y = gen.emit(OpId::Mul, {x, c});
      target = x;
      grad_write = false;
      break;
    }
  }
  if (y < 0 || target < 0) return;
  int through = target;
  switch (gen.rng().below(3)) {
    case 0: break;
    case 1: through = gen.view_of(target, grad_write || gen.rng().chance(0.5), /*single_output=*/true); break;
    default: {
      int d = gen.emit(OpId::Detach, {target});
      if (d >= 0) through = d;
      break;
    }
  }
  gen.write(through, grad_write);
  if (second >= 0 && gen.rng().chance(0.7)) gen.write(second, true);
  int s = gen.reduce(y);
  if (s >= 0) gen.backward(s, gen.rng().chance(0.4) ? 2 : 1);
}

}  // namespace parity::generators::recipes
