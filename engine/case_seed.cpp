#include "engine/case_seed.h"

#include <string>

#include "engine/isolation.h"
#include "program/splitmix.h"

namespace parity::engine {

using program::splitmix64;

std::uint64_t case_seed(std::uint64_t campaign_seed, std::uint64_t k) {
  return splitmix64(campaign_seed ^ splitmix64(k));
}

int case_size(std::uint64_t k) { return static_cast<int>(k % 101); }

rc::Shrinkable<program::Program> generate_case(std::uint64_t campaign_seed, std::uint64_t k,
                                               const generators::GenConfig& config) {
  try {
    return generators::generate(case_seed(campaign_seed, k), case_size(k), config);
  } catch (const std::exception& e) {
    throw EvaluationError("the generator failed for case " + std::to_string(k) + " (seed " +
                          std::to_string(campaign_seed) + "): " + e.what());
  }
}

}  // namespace parity::engine
