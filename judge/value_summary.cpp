#include "judge/value_summary.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

#include "program/splitmix.h"
#include "program/types.h"

namespace parity::judge {

using program::render_number;
using program::splitmix64;

namespace {

// Seeds of the three hashes, so that they are not the same function of a position (kBitsSeed is odd: positions
// times it stay distinct).
constexpr std::uint64_t kBitsSeed = 0x70617269747963ULL, kWeightSeed = 0x77656967687473ULL,
                        kNonFiniteSeed = 0x6e6f6e66696eULL;

// The checksum's weight of position i: a magnitude in [1, 2), so that no element counts for less than itself,
// with a sign that follows no pattern a kernel's rounding could (see judge/compare.cpp).
double weight(std::size_t i) {
  const std::uint64_t h = splitmix64(kWeightSeed ^ static_cast<std::uint64_t>(i));
  const double magnitude = 1.0 + static_cast<double>(static_cast<std::int64_t>(h >> 11)) * 0x1.0p-53;
  // The sign from the hash's lowest bit, set without a branch (which would be mispredicted half the time).
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(magnitude) | (h << 63));
}

std::uint64_t nonfinite_hash(std::size_t i, std::uint64_t kind) {
  return splitmix64(kNonFiniteSeed ^ (static_cast<std::uint64_t>(i) * 4 + kind));
}

}  // namespace

ValueSummary summarise(std::span<const double> values) {
  ValueSummary s;
  s.numel = static_cast<std::int64_t>(values.size());
  double min = std::numeric_limits<double>::infinity(), max = -min;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    // A sum of hashes of (bits, position) rather than a chain: no element waits for the one before it.
    s.bits += splitmix64(std::bit_cast<std::uint64_t>(x) ^ (static_cast<std::uint64_t>(i) * kBitsSeed));
    if (std::isfinite(x)) [[likely]] {
      min = std::min(min, x);
      max = std::max(max, x);
      s.sum += x;
      s.abs_sum += std::fabs(x);
      s.sum_sq += x * x;
      s.checksum += weight(i) * x;
    } else if (std::isnan(x)) {
      ++s.nan;
      s.nonfinite_at += nonfinite_hash(i, 1);
    } else {
      ++(x > 0 ? s.pos_inf : s.neg_inf);
      s.nonfinite_at += nonfinite_hash(i, x > 0 ? 2 : 3);
    }
  }
  if (min <= max) s.min = min, s.max = max;  // some element was finite
  return s;
}

std::optional<ValueSummary> summarise_if_large(std::vector<double>& values) {
  if (values.size() <= kFullValuesUpTo) return std::nullopt;
  ValueSummary s = summarise(values);
  std::vector<double>().swap(values);
  return s;
}

std::string render(const ValueSummary& s) {
  return std::to_string(s.numel) + " elements (summarised): min " + render_number(s.min) + ", max " +
         render_number(s.max) + ", sum " + render_number(s.sum) + ", checksum " + render_number(s.checksum) + ", " +
         std::to_string(s.nan) + " nan, " + std::to_string(s.pos_inf) + " +inf, " + std::to_string(s.neg_inf) +
         " -inf, bits " + hash_text(s.bits);
}

std::string hash_text(std::uint64_t h) {
  char text[17];
  const auto [end, ec] = std::to_chars(text, text + 16, h, 16);
  std::string out(text, end);
  return std::string(16 - out.size(), '0') + out;
}

std::optional<std::uint64_t> parse_hash_text(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t h = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), h, 16);
  const bool lowercase = std::none_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'F'; });
  if (ec != std::errc() || end != text.data() + text.size() || !lowercase) return std::nullopt;
  return h;
}

}  // namespace parity::judge
