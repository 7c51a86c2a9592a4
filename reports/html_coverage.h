// The report page's coverage section: the line of what was never exercised, and the role tables (pairs and
// triples of events on one storage, judge/role_combinations.h) a person reads to see which combinations a
// campaign met, its goals first.
#pragma once
#include <string>

#include "reports/run_summary.h"

namespace parity::reports {

// HTML, escaped; the page's styles (`.coverage`, tables) apply.
std::string render_coverage(const Coverage&);

}  // namespace parity::reports
