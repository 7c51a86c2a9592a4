#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::Attrs;
using program::DType;
using program::OpId;

// out= forms as PyTorch's tests call them: into an empty tensor of the result's shape, one of another shape
// (resized: its storage grown in place, then laid out as the result), one of no elements, a transposed one of
// the right shape (its strides kept), one of another dtype (cast, or refused), or one of the inputs (which
// may not be resized); and, with grad mode on, refused when an input or out requires grad (under no_grad a
// leaf requiring grad is written; a comparison's out never refuses).
void out(StepBuilder& gen) {
  static const std::vector<OpId> out_forms = [] {
    std::vector<OpId> ops;
    for (const program::OpSpec& op : program::op_table())
      if (op.out_of) ops.push_back(op.id);
    return ops;
  }();
  const OpId op = gen.rng().pick(out_forms);
  const bool binary = program::spec(op).arity == 3;
  const bool comparison = program::spec(*program::spec(op).out_of).leaf_result;
  const DType d = gen.rng().chance(0.8) ? gen.floating() : DType::Int64;
  std::vector<std::int64_t> shape = {gen.rng().range(1, 3), gen.rng().range(1, 3)};
  std::vector<std::int64_t> other_shape = shape;
  if (gen.rng().chance(0.3)) other_shape = {shape[1]};  // broadcast
  const bool grad = gen.rng().chance(0.8);
  const int a = gen.fresh(shape, d, gen.rng().chance(0.15));
  const int b = binary ? gen.fresh(other_shape, d, false) : a;
  if (a < 0 || b < 0) return;
  int out = -1;
  switch (gen.rng().below(6)) {
    case 0:
      out = gen.emit(OpId::Empty, {}, [&](Attrs& at) {
        at.sizes = shape;
        at.dtype = comparison ? DType::Bool : d;
      });
      break;
    case 1: out = gen.fresh({gen.rng().range(1, 7)}, d, false); break;
    case 2: out = gen.fresh({0}, d, false); break;
    case 3: {
      const int t = gen.fresh({shape[1], shape[0]}, d, false);
      out = t < 0 ? -1 : gen.emit(OpId::Transpose, {t}, [](Attrs& at) { at.dim = 0, at.dim1 = 1; });
      break;
    }
    case 4: out = gen.rng().chance(0.5) ? a : b; break;
    default: {
      const DType od = gen.rng().pick({DType::Float64, DType::Float32, DType::Int64, DType::Bool});
      out = gen.fresh(shape, od, program::is_floating(od) && (comparison || !grad) && gen.rng().chance(0.5));
      break;
    }
  }
  if (out < 0) return;
  if (binary)
    gen.emit(op, {out, a, b}, {}, grad, /*allow_raise=*/true);
  else
    gen.emit(op, {out, a}, {}, grad, /*allow_raise=*/true);
}

}  // namespace parity::generators::recipes
