#include <vector>

#include "generators/layout_gen.h"
#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::Meta;
using program::OpId;

// Views, then in-place writes through them (scalar or tensor operands, possibly requiring grad).
// Writes through views of non-leaves rebase history (CopySlices); through views of leaves requiring grad and
// through outputs of multi-output views they raise. Another view of the same base, made before the write,
// has its grad_fn regenerated when observed after it.
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
  if (gen.rng().chance(0.4)) gen.view_of(x);  // a sibling view, observed after the write
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
    gen.write(v, true, /*allow_raise=*/true);
  } else {
    const Meta vm = gen.meta(v);
    int other = gen.fresh(vm.sizes, program::is_floating(vm.dtype) ? gen.floating() : vm.dtype,
                      program::is_floating(vm.dtype) && gen.rng().chance(0.5));
    if (other < 0) return;
    static const std::vector<OpId> binary = {OpId::Add_, OpId::Mul_, OpId::Sub_, OpId::Copy_};
    if (gen.emit(gen.rng().pick(binary), {v, other}, {}, true, /*allow_raise=*/true) < 0) gen.write(v, true, true);
  }
  if (gen.state().live(x) && gen.meta(x).requires_grad) {
    int s = gen.reduce(x);
    if (s >= 0) gen.backward(s, 1);
  }
}

}  // namespace parity::generators::recipes
