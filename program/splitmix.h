// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): the one integer
// mixer behind every seeded choice in parity: seeded tensor contents (program/content.cpp), the generators'
// random stream (generators/rng.h) and each campaign case's seed (cli/fuzz.cpp). Changing it changes which
// programs and values every seed stands for, so recorded seeds and findings would no longer replay.
#pragma once
#include <cstdint>

namespace parity::program {

// What the SplitMix64 state advances by at each draw (2^64 / golden ratio, odd).
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// The draw from SplitMix64 state `x`: x advanced by the gamma, then mixed. As a pure function of x it is also
// a good hash of one 64-bit integer.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += kSplitMix64Gamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace parity::program
