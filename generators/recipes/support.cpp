#include <array>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::OpId;

std::span<const Recipe> all() {
  static constexpr Recipe kAll[] = {
#define PARITY_RECIPE(name, weight) {#name, weight, &name},
#include "generators/recipes/recipes.def"
#undef PARITY_RECIPE
  };
  return kAll;
}

std::vector<OpId> unary_saving(program::Saves saves, bool inplace) {
  std::vector<OpId> out;
  for (const program::OpSpec& op : program::op_table())
    if (!op.device_only && op.arity == 1 && op.saves == saves && op.is_inplace() == inplace) out.push_back(op.id);
  return out;
}

std::optional<OpOnLeaf> differentiable_op_on_leaf(StepBuilder& gen) {
  static const std::vector<OpId> ops = [] {
    std::vector<OpId> out;
    for (const program::OpSpec& op : program::op_table())
      if (program::records_history(op) && !op.device_only) out.push_back(op.id);
    return out;
  }();
  const OpId op = gen.rng().pick(ops);
  const int leaf = gen.rg_leaf();
  if (leaf < 0) return std::nullopt;
  int x = leaf;
  if (program::spec(op).is_inplace() || gen.rng().chance(0.2)) x = gen.emit(OpId::MulScalar, {x});
  if (x < 0) return std::nullopt;
  const std::optional<std::vector<int>> inputs = gen.operands_around(op, x);
  if (!inputs) return std::nullopt;
  const int y = gen.emit(op, *inputs);
  if (y < 0 || !gen.state().live(y) || !gen.meta(y).requires_grad) return std::nullopt;
  return OpOnLeaf{leaf, y};
}

}  // namespace parity::generators::recipes
