// RapidCheck generators of well-typed programs (plus a deliberate share of invalid steps), with shrinking that
// removes steps and everything that depends on them.
#pragma once
#include <cstdint>
#include <rapidcheck.h>
#include <vector>

#include "generators/selection.h"
#include "program/program.h"

namespace parity::generators {

struct GenConfig {
  int max_steps = 14;
  double invalid_share = 0.08;  // chance that a step is deliberately ill-typed
  // Swarm testing (Groce et al., 2012): this share of programs draws a random half of the ops and of the recipes
  // and uses only those, so that combinations the full mix dilutes (two rare ops, one recipe over and over)
  // get weight. Factories, backward and the steps recipes emit themselves are never left out.
  double swarm_share = 0.5;
  // Factories and to() also put tensors on cuda, a mix with cpu so that the device rules are exercised
  // (`parity fuzz --device cuda`). Off, nothing is drawn for devices: every tensor is on the CPU and the programs
  // are those of a build that knew no device.
  bool cuda = false;
  // The ops and dtypes programs may use (generators/selection.h); everything by default.
  Selection selection;
};

rc::Gen<program::Program> programs(GenConfig = {});

// The same generator outside RapidCheck's runner (parity fuzz): same seed and size, same program.
rc::Shrinkable<program::Program> generate(std::uint64_t seed, int size, const GenConfig& = {});

// The generation code's version: bump it when a change to generators/ (or to an op's shape rule) makes a seed
// give other programs.
inline constexpr int kGeneratorCodeVersion = 24;

// Names the generator in every record; with the seed and max_steps it decides every program. It is
// kGeneratorCodeVersion * 100000 plus a five-digit fingerprint of what the generator reads from the op table
// (names, order, arity, attributes, weights, traits), so adding, reweighting or reordering an op changes it
// without anyone remembering to.
int generator_version();

}  // namespace parity::generators
