// RapidCheck generators of well-typed programs (plus a deliberate share of invalid steps), with shrinking that
// removes steps and everything that depends on them.
#pragma once
#include <cstdint>
#include <rapidcheck.h>
#include <vector>

#include "program/program.h"

namespace parity::generators {

struct GenConfig {
  int max_steps = 14;
  double invalid_share = 0.08;  // chance that a step is deliberately ill-typed
};

rc::Gen<program::Program> programs(GenConfig = {});

// The same generator outside RapidCheck's runner (parity fuzz): same seed and size, same program.
rc::Shrinkable<program::Program> generate(std::uint64_t seed, int size, const GenConfig& = {});

// Version of the generator; bump when the same seed starts giving other programs.
inline constexpr int kGeneratorVersion = 2;

}  // namespace parity::generators
