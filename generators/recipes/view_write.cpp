#include <vector>

#include "generators/layout_gen.h"
#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::Meta;
using program::OpId;

// Views, then in-place writes through them or into their base (scalar or tensor operands, possibly requiring
// grad). Writes through views of non-leaves rebase history (CopySlices); through views of leaves requiring grad
// and through outputs of multi-output views they raise. Another view of the same base, made before the write,
// has its grad_fn regenerated when observed after it. A view or its sibling may retain its grad before the
// write and be the root of the backward after it (`v = y[0:1]; v.retain_grad(); y.add_(1); v.sum().backward()`):
// the retained gradient must follow the view's regenerated history, written through the base or a sibling.
void view_write(StepBuilder& gen) {
  int x = -1;
  const int from = gen.rng().below(5);
  if (from < 2) {
    x = gen.fresh(random_layout(gen.rng()).sizes, gen.floating(), false);
  } else if (from < 4) {
    int leaf = gen.rg_leaf();
    x = leaf < 0 ? -1 : gen.emit(gen.rng().chance(0.5) ? OpId::MulScalar : OpId::Clone, {leaf});
  } else {
    x = gen.rg_leaf();  // a leaf requiring grad: the write raises
  }
  if (x < 0) return;
  int v = gen.view_of(x);
  if (gen.rng().chance(0.3)) v = gen.view_of(v);
  if (!gen.state().live(v)) return;
  const int sibling = gen.rng().chance(0.4) ? gen.view_of(x) : -1;  // observed after the write
  int retained = -1;
  if (gen.meta(x).requires_grad && gen.rng().chance(0.4)) {
    retained = sibling >= 0 && gen.rng().chance(0.5) ? sibling : v;
    if (gen.emit(OpId::RetainGrad, {retained}, {}, true, /*allow_raise=*/true) < 0) retained = -1;
  }
  // The write goes into the base itself a third of the time: the view then sees it without being written. A
  // view that retains its grad is mostly not the one written: the base or the other view is, and its history is
  // rebased all the same.
  int target = gen.rng().chance(0.35) ? x : v;
  if (retained >= 0) {
    const int other = retained == v ? sibling : v;
    target = gen.rng().chance(0.5) ? x : (other >= 0 && gen.rng().chance(0.6) ? other : v);
  }
  if (gen.rng().chance(0.1)) {  // as_strided reaching past the end of the storage raises
    const std::int64_t past = gen.state().value(x).storage_numel;
    gen.emit(OpId::AsStrided, {x}, [past](Attrs& a) {
      a.sizes = {2};
      a.strides = {1};
      a.offset = past;
    }, true, /*allow_raise=*/true);
  }
  if (gen.rng().chance(0.15)) gen.emit(gen.rng().chance(0.7) ? OpId::Detach : OpId::Detach_, {v}, {}, true, /*allow_raise=*/true);
  if (gen.rng().chance(0.5)) {
    gen.write(target, true, /*allow_raise=*/true);
  } else {
    const Meta vm = gen.meta(target);
    int other = gen.fresh(vm.sizes, program::is_floating(vm.dtype) ? gen.floating() : vm.dtype,
                      program::is_floating(vm.dtype) && gen.rng().chance(0.5));
    if (other < 0) return;
    static const std::vector<OpId> binary = {OpId::Add_, OpId::Mul_, OpId::Sub_, OpId::Copy_};
    if (gen.emit(gen.rng().pick(binary), {target, other}, {}, true, /*allow_raise=*/true) < 0)
      gen.write(target, true, true);
  }
  const int root = retained >= 0 && gen.state().live(retained) && gen.rng().chance(0.8) ? retained : x;
  if (gen.state().live(root) && gen.meta(root).requires_grad) {
    int s = gen.reduce(root);
    if (s >= 0) gen.backward(s, 1);
  }
}

}  // namespace parity::generators::recipes
