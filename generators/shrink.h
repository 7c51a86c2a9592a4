// Shrinking of programs, deterministic: first fewer steps (the back half, then one step at a time from the
// last, each with every step that depends on it, then single steps spliced out of chains), then simpler
// attributes (requires_grad off, grad mode on, retain_graph off, keepdim off, contiguous memory format,
// float32, a contiguous leaf layout). Splices and simpler attributes are kept only where the program keeps the
// same expected outcome at every step, so that a shrink does not swap one failure for another.
#pragma once
#include <cstdint>
#include <rapidcheck.h>
#include <vector>

#include "program/program.h"

namespace parity::generators {

// `p` without step `step` and every step that uses its value, directly or not; inputs renumbered.
program::Program remove_step(const program::Program& p, int step);

// `p` without step `step`, its users reading one of its operands instead (a step spliced out of a chain).
program::Program bypass_step(const program::Program& p, int step, std::size_t operand = 0);

// A measure every shrink strictly decreases: 1000 per step plus one per non-simple attribute.
std::int64_t complexity(const program::Program& p);

std::vector<program::Program> shrink_candidates(const program::Program& p);
rc::Seq<program::Program> shrinks(const program::Program& p);

}  // namespace parity::generators
