// Text for people: divergences and step outcomes as `parity` prints them.
#pragma once
#include <string>

#include "program/compare.h"
#include "program/program.h"
#include "program/trace.h"

namespace parity::cli {

// "add:values at step 3 (add), value v3: impl element 0 of 4 = 1 | libtorch element 0 of 4 = 2"
std::string describe_divergence(const program::Program&, const program::Divergence&);
// One step's outcome in a column: "ok v3 [2, 3] float32 strides [3, 1]", "error(shape)", "skipped".
std::string describe_step(const program::StepObs&, int step);
// Makes a message safe for one terminal line: control characters become spaces, length is capped.
std::string one_line(std::string text, std::size_t max = 1000);

}  // namespace parity::cli
