#include "generators/program_gen.h"

#include <algorithm>
#include <span>
#include <vector>

#include "generators/recipes/recipe.h"
#include "generators/rng.h"
#include "generators/shrink.h"
#include "generators/step_builder.h"

namespace parity::generators {

using program::OpKind;
using program::Program;

namespace {

// One program: random steps, and now and then a recipe (a swarm's programs draw from half of each).
Program build(Rng& rng, const GenConfig& cfg, int length) {
  StepBuilder gen(rng, cfg, length);
  const std::span<const recipes::Recipe> all = recipes::all();
  const std::vector<bool> enabled = gen.draw_swarm(all.size());
  std::vector<double> weights;
  for (std::size_t k = 0; k < all.size(); ++k) weights.push_back(enabled[k] ? all[k].weight : 0);
  while (gen.room()) {
    if (gen.size() > 0 && length - gen.size() >= 4 && rng.chance(0.3)) {
      const int k = rng.weighted(weights);
      if (k < 0) gen.random_step();  // a swarm without recipes
      else all[static_cast<std::size_t>(k)].run(gen);
    } else {
      gen.random_step();
    }
  }
  return gen.take_program();
}

int program_length(Rng& rng, int size, const GenConfig& cfg) {
  int max_steps = std::max(cfg.max_steps, 1);
  // Even the smallest sizes get a few steps: one or two steps rarely show anything about aliasing or autograd.
  int cap = std::clamp(max_steps * std::clamp(size, 0, rc::kNominalSize) / rc::kNominalSize, std::min(4, max_steps),
                       max_steps);
  return cap <= 2 ? cap : static_cast<int>(rng.range((cap + 1) / 2, cap));
}

}  // namespace

rc::Gen<Program> programs(GenConfig cfg) {
  return rc::Gen<Program>([cfg](const rc::Random& random, int size) {
    rc::Random r = random;
    Rng rng(r.next());
    const int length = program_length(rng, size, cfg);
    auto all = rc::shrinkable::shrinkRecur(build(rng, cfg, length), &shrinks);
    if (cfg.selection.everything()) return all;
    return rc::shrinkable::map(std::move(all),
                               [selection = cfg.selection](Program p) { return select_steps(p, selection); });
  });
}

rc::Shrinkable<Program> generate(std::uint64_t seed, int size, const GenConfig& cfg) {
  return programs(cfg)(rc::Random(seed), size);
}

}  // namespace parity::generators
