// Where a case's program came from. Findings say it, since only a generated program is case k of its seed: a
// mutant or a corpus folder's program is replayed from the program the finding holds, not from the seed.
#pragma once
#include <optional>
#include <string_view>

#include "program/internal_assert.h"

namespace parity::reports {

enum class CaseOrigin {
  Generated,  // the generator's case k of the campaign's seed
  Mutated,    // a mutant of a corpus entry (coverage guidance: engine/corpus.h)
  Corpus,     // a program of the corpus folder (`parity fuzz --corpus DIR`) run as it is: a regression case
};

inline std::string_view to_string(CaseOrigin o) {
  switch (o) {
    case CaseOrigin::Generated: return "generated";
    case CaseOrigin::Mutated: return "mutated";
    case CaseOrigin::Corpus: return "corpus";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

inline std::optional<CaseOrigin> parse_case_origin(std::string_view s) {
  for (CaseOrigin o : {CaseOrigin::Generated, CaseOrigin::Mutated, CaseOrigin::Corpus})
    if (to_string(o) == s) return o;
  return std::nullopt;
}

}  // namespace parity::reports
