#include <vector>

#include "generators/recipes/recipe.h"

namespace parity::generators::recipes {

using program::DType;
using program::OpId;

// mm and matmul over the ranks matmul distinguishes, one side or both requiring grad.
void matmul(StepBuilder& gen) {
  DType d = gen.floating();
  while (!program::allows(program::spec(OpId::Matmul).operand0.dtypes, d)) d = gen.floating();
  const std::int64_t n = gen.rng().range(0, 3), k = gen.rng().range(1, 3), p = gen.rng().range(1, 3), b = gen.rng().range(1, 2);
  static const std::vector<std::vector<int>> ranks = {{2, 2}, {1, 1}, {2, 1}, {1, 2}, {3, 2}, {3, 1}, {1, 3}, {2, 3}, {3, 3}};
  const auto& r = gen.rng().pick(ranks);
  auto shape = [&](int rank, bool left) -> std::vector<std::int64_t> {
    if (rank == 1) return {k};
    std::vector<std::int64_t> s = left ? std::vector<std::int64_t>{n, k} : std::vector<std::int64_t>{k, p};
    if (rank == 3) s.insert(s.begin(), gen.rng().chance(0.3) ? 1 : b);
    return s;
  };
  const bool rg_a = gen.rng().chance(0.7), rg_b = !rg_a || gen.rng().chance(0.5);
  int a = gen.fresh(shape(r[0], true), d, rg_a), c = gen.fresh(shape(r[1], false), d, rg_b);
  if (a < 0 || c < 0) return;
  int y = gen.emit(r[0] == 2 && r[1] == 2 && gen.rng().chance(0.5) ? OpId::Mm : OpId::Matmul, {a, c});
  if (y < 0) return;
  if (gen.rng().chance(0.3)) gen.write(gen.rng().chance(0.5) ? a : c, false);  // a saved operand changes: version error
  int s = gen.reduce(y);
  if (s >= 0) gen.backward(s, 1);
}

}  // namespace parity::generators::recipes
