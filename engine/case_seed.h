// Case seeding: case k of a campaign is generated from the campaign seed and k alone, so that shards, reruns
// and `parity replay` of a finding all see the same program.
#pragma once
#include <cstdint>

#include <rapidcheck.h>

#include "generators/program_gen.h"
#include "program/program.h"

namespace parity::engine {

// What the generator is given for case k (recorded in every finding: case_seed, size).
std::uint64_t case_seed(std::uint64_t campaign_seed, std::uint64_t k);
int case_size(std::uint64_t k);

// Case k's program with its shrinks. Throws EvaluationError (engine/isolation.h) when the generator fails.
rc::Shrinkable<program::Program> generate_case(std::uint64_t campaign_seed, std::uint64_t k,
                                               const generators::GenConfig& config);

// Case k of a campaign named rather than built: a worker generates it itself, so that the parent builds a program
// only for a case that diverged or died (generate_case is a function of these alone).
struct GeneratedCase {
  std::uint64_t seed = 0;
  std::uint64_t k = 0;
  generators::GenConfig config;
};

}  // namespace parity::engine
