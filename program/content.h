// Seeded tensor contents, identical on every backend and printable in repros. Values are small multiples of
// 1/4 (floats) or small integers, so that arithmetic on them is exact in float32 as often as possible.
#pragma once
#include <cstdint>
#include <vector>

#include "program/types.h"

namespace parity::program {

std::vector<double> seeded_content(std::uint64_t seed, std::int64_t count, DType dtype);

}  // namespace parity::program
