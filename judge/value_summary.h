// What a trace keeps of a large tensor's elements: a summary in place of every value, so that a trace's memory
// does not grow with the elements a program makes (512 results of 2^20 elements once took a trace 7.7 GB).
// Small tensors keep every value; judge/compare.cpp compares summaries with the element-wise tolerances.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace parity::judge {

// A trace keeps the values of a tensor of at most this many elements and summarises larger ones (unless the run
// keeps every value, KeepValues::All). Every tensor the generator makes is far smaller (its layouts hold at most
// 48 elements, broadcasting a few thousand at worst), so findings of campaigns keep their exact values; a tensor
// this large is already more numbers than a person reads, and 32 KiB of doubles bounds what one observation
// costs a trace, and a finding, whatever the program asks for.
inline constexpr std::size_t kFullValuesUpTo = 4096;

struct ValueSummary {
  std::int64_t numel = 0;
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  // Where the NaNs and infinities are: a sum of a hash of each one's position and kind, so that two tensors
  // with the same counts in other places differ here.
  std::uint64_t nonfinite_at = 0;
  // Of the finite elements; all 0 when there are none.
  double min = 0, max = 0;
  double sum = 0;
  double abs_sum = 0;  // of |x|: the scale of the sum's tolerance
  double sum_sq = 0;   // of x^2: the scale of the checksum's tolerance
  // Σ w_i x_i, the weight w_i of position i pseudo-random (a hash of i) of magnitude in [1, 2) and either sign:
  // one wrong element moves it by at least its error, and a permutation by the differences of the weights.
  double checksum = 0;
  // A hash of every element's exact bits with its position: equal hashes, equal values. For reports, and for
  // the dtypes compared exactly.
  std::uint64_t bits = 0;
  bool operator==(const ValueSummary&) const = default;
};

ValueSummary summarise(std::span<const double> values);

// When `values` holds more than kFullValuesUpTo elements: their summary, and `values` emptied (its memory
// freed). Otherwise nullopt, and `values` as it was.
std::optional<ValueSummary> summarise_if_large(std::vector<double>& values);

// "1048576 elements (summarised): min 0, max 1, sum 1, checksum 0.73, 0 nan, 0 +inf, 0 -inf, bits 9e3779b97f4a7c15".
std::string render(const ValueSummary&);

// The 64-bit hashes as JSON and the HTML report write them: 16 lowercase hexadecimal digits.
std::string hash_text(std::uint64_t);
std::optional<std::uint64_t> parse_hash_text(std::string_view);

}  // namespace parity::judge
