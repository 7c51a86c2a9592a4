#include "reports/build_info.h"

#include "reports/commit.h"  // generated at build time: PARITY_COMMIT
#ifndef PARITY_SOURCE_DIR
#define PARITY_SOURCE_DIR "."
#endif

namespace parity::reports {

std::string_view parity_commit() { return PARITY_COMMIT; }

std::filesystem::path default_known_divergences_path() {
  return std::filesystem::path(PARITY_SOURCE_DIR) / "reports" / "known_divergences.json";
}

}  // namespace parity::reports
