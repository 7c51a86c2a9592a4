#include <vector>

#include "generators/layout_gen.h"
#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::OpId;

namespace {

// copy.deepcopy of x, sometimes after x got a .grad, sometimes together (one memo) with an alias of x or with
// that .grad, copied before or after x: one memo copies the gradient once, so x's copy's .grad is its copy.
int deepcopy_group(StepBuilder& gen, int x) {
  int grad = -1;
  if (gen.rng().chance(0.4) && gen.meta(x).requires_grad) {
    int s = gen.reduce(gen.emit(OpId::MulScalar, {x}));
    if (s >= 0) gen.backward(s, 1);
    if (s >= 0 && gen.rng().chance(0.5)) grad = gen.emit(OpId::Grad, {x});
  }
  const std::int64_t memo = gen.rng().range(0, 1000);
  auto same_memo = [memo](Attrs& a) { a.memo = memo; };
  const bool grad_first = gen.rng().chance(0.5);
  if (grad >= 0 && grad_first) gen.emit(OpId::Deepcopy, {grad}, same_memo, true, true);
  int c = gen.emit(OpId::Deepcopy, {x}, same_memo);
  if (grad >= 0 && !grad_first) gen.emit(OpId::Deepcopy, {grad}, same_memo, true, true);
  if (c >= 0 && gen.rng().chance(0.6)) {
    int alias = gen.rng().chance(0.5) ? gen.view_of(x, false) : gen.emit(OpId::Detach, {x});
    if (alias >= 0) gen.emit(OpId::Deepcopy, {alias}, same_memo, true, true);
  }
  if (gen.rng().chance(0.3)) {  // a non-leaf refuses
    int y = gen.emit(OpId::MulScalar, {x});
    if (y >= 0) gen.emit(OpId::Deepcopy, {y}, same_memo, true, true);
  }
  return c;
}

}  // namespace

// The copy recipes, each with its own graph behaviour, then writes on either side.
void copy(StepBuilder& gen) {
  int x = gen.rng().chance(0.75) ? gen.rg_leaf() : gen.fresh(random_shape(gen.rng()), gen.floating(), false);
  if (x < 0) return;
  int c = -1;
  switch (gen.rng().below(10)) {
    case 0: c = gen.emit(OpId::Clone, {x}); break;
    case 5: c = gen.emit(OpId::To, {x}, [&](Attrs& a) { a.copy = true; if (gen.rng().chance(0.5)) a.dtype = gen.meta(x).dtype; }); break;
    case 6: c = gen.emit(OpId::NewTensor, {x}); break;
    case 7: c = gen.emit(OpId::Data, {x}); break;
    case 8: case 9: c = deepcopy_group(gen, x); break;
    case 1: {
      int d = gen.emit(OpId::Detach, {x});
      c = d < 0 ? -1 : gen.emit(OpId::Clone, {d});
      break;
    }
    case 2: {
      int c0 = gen.emit(OpId::Clone, {x});
      c = c0 < 0 ? -1 : gen.emit(OpId::Detach, {c0});
      break;
    }
    case 3: {
      int e = gen.emit(gen.rng().chance(0.5) ? OpId::EmptyLike : OpId::ZerosLike, {x});
      c = e < 0 ? -1 : gen.emit(OpId::Copy_, {e, x});
      break;
    }
    default: c = gen.emit(OpId::Contiguous, {x}); break;
  }
  if (c < 0) return;
  if (gen.rng().chance(0.5)) gen.write(c, true);
  if (gen.rng().chance(0.3)) gen.write(x, false);
  if (gen.state().live(c) && gen.meta(c).requires_grad) {
    int s = gen.reduce(c);
    if (s >= 0) gen.backward(s, 1);
  }
}

}  // namespace parity::generators::recipes
