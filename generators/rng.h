// The generators' own random stream. RapidCheck's Random is splittable and meant to be consumed through its
// combinators; a program is built by hundreds of small dependent choices, so one plain stream seeded from the
// Random keeps generation fast and exactly reproducible (same seed, same program) inside and outside
// RapidCheck's runner.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <vector>

#include "program/splitmix.h"

namespace parity::generators {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  // SplitMix64 (program/splitmix.h): tiny state, full period, good enough mixing for choosing among a few options.
  std::uint64_t next() {
    const std::uint64_t z = program::splitmix64(state_);
    state_ += program::kSplitMix64Gamma;
    return z;
  }

  // Uniform in [0, n); n must be positive.
  std::int64_t below(std::int64_t n) {
    if (n <= 0) throw std::logic_error("Rng::below needs a positive bound");
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }

  // Uniform in [lo, hi] (inclusive); lo <= hi.
  std::int64_t range(std::int64_t lo, std::int64_t hi) { return lo + below(hi - lo + 1); }

  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(below(static_cast<std::int64_t>(v.size())))];
  }
  template <class T>
  T pick(std::initializer_list<T> v) {
    return *(v.begin() + below(static_cast<std::int64_t>(v.size())));
  }

  // Index drawn with probability proportional to its weight; -1 when every weight is zero.
  int weighted(std::span<const double> weights) {
    double total = 0;
    for (double w : weights) total += w > 0 ? w : 0;
    if (total <= 0) return -1;
    double r = static_cast<double>(next() >> 11) * 0x1.0p-53 * total;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (weights[i] <= 0) continue;
      if (r < weights[i]) return static_cast<int>(i);
      r -= weights[i];
    }
    for (std::size_t i = weights.size(); i-- > 0;)
      if (weights[i] > 0) return static_cast<int>(i);
    return -1;
  }

  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(below(static_cast<std::int64_t>(i)))]);
  }

 private:
  std::uint64_t state_;
};

}  // namespace parity::generators
