#include "program/spelling.h"

#include <algorithm>

namespace parity::program {

namespace {

// Optimal string alignment distance: Levenshtein's edits plus the swap of two neighbours, the commonest typo.
std::size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& known) {
  // Names longer than any program's or flag's are not worth a quadratic table.
  constexpr std::size_t kLongest = 64;
  if (typed.empty() || typed.size() > kLongest) return std::nullopt;
  const std::size_t limit = std::min<std::size_t>(2, std::max<std::size_t>(1, typed.size() / 3));
  auto common_prefix = [&](const std::string& name) {
    return static_cast<std::size_t>(std::mismatch(typed.begin(), typed.end(), name.begin(), name.end()).first -
                                    typed.begin());
  };
  std::optional<std::string> best;
  std::size_t best_edits = limit + 1, best_prefix = 0;
  if (std::find(known.begin(), known.end(), typed) != known.end()) return std::nullopt;  // no typo
  for (const std::string& name : known) {
    if (name.size() > kLongest) continue;
    const std::size_t e = edits(typed, name);
    // Typos are rarer at the start: of two names as close, the one sharing the longer prefix ("mull": mul, not full).
    if (e > 0 && (e < best_edits || (e == best_edits && common_prefix(name) > best_prefix))) {
      best = name;
      best_edits = e;
      best_prefix = common_prefix(name);
    }
  }
  return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const auto name = closest_name(typed, known);
  return name ? " (did you mean \"" + *name + "\"?)" : "";
}

}  // namespace parity::program
