// The recipes, one file each (generators/recipes/recipes.def lists them), and what several of them share.
#pragma once
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "generators/step_builder.h"
#include "program/op_table.h"

namespace parity::generators::recipes {

#define PARITY_RECIPE(name, weight) void name(StepBuilder& gen);
#include "generators/recipes/recipes.def"
#undef PARITY_RECIPE

struct Recipe {
  std::string_view name;
  double weight;  // relative chance among the recipes a program may run
  void (*run)(StepBuilder&);
};

// Every recipe, in recipes.def order.
std::span<const Recipe> all();

// One-operand ops whose derivative reads `saves` (only arithmetic saves anything), out of place or in place.
std::vector<program::OpId> unary_saving(program::Saves saves, bool inplace);

// A leaf requiring grad and the result of one op backward can go through, computed from it with the operand
// layouts, dtypes and attributes the generator draws for the op (an in-place form writes a non-leaf copy of
// the leaf); nullopt when no such step could be made.
struct OpOnLeaf {
  int leaf;
  int result;
};
std::optional<OpOnLeaf> differentiable_op_on_leaf(StepBuilder& gen);

}  // namespace parity::generators::recipes
