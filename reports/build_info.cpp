#include "reports/build_info.h"

#ifndef PARITY_COMMIT
#define PARITY_COMMIT "unknown"
#endif
#ifndef PARITY_SOURCE_DIR
#define PARITY_SOURCE_DIR "."
#endif

namespace parity::reports {

std::string_view parity_commit() { return PARITY_COMMIT; }

std::filesystem::path default_known_divergences_path() {
  return std::filesystem::path(PARITY_SOURCE_DIR) / "reports" / "known_divergences.json";
}

}  // namespace parity::reports
