// Known divergences: one reviewed file lists differences that are understood (e.g. a LibTorch-version quirk),
// each with a reason, an optional LibTorch version range and an expiry date. A finding that matches one is
// reported as expected, never skipped; an expired entry matches nothing, so it has to be reviewed again.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/signature.h"

namespace parity::reports {

struct KnownDivergence {
  std::string signature;  // a signature's text, or a pattern where '*' matches any run of characters
  std::string reason;
  std::optional<std::string> libtorch_min;  // inclusive
  std::optional<std::string> libtorch_max;  // inclusive
  std::string expires;                      // YYYY-MM-DD, last day the entry applies
};

class KnownDivergences {
 public:
  KnownDivergences() = default;
  // Throws ReportError naming the file and the entry at fault.
  static KnownDivergences load(const std::filesystem::path& path);
  static KnownDivergences from_json(const nlohmann::json& j, const std::string& origin);

  // Whether an entry is in force for this LibTorch version on `today` (YYYY-MM-DD): not expired, in range.
  static bool applies(const KnownDivergence& k, std::string_view libtorch_version, std::string_view today);
  // The first entry that covers this signature for this LibTorch version on `today`.
  const KnownDivergence* match(const judge::Signature& signature, std::string_view libtorch_version,
                               std::string_view today) const;
  std::vector<const KnownDivergence*> expired(std::string_view today) const;
  const std::vector<KnownDivergence>& entries() const { return entries_; }

 private:
  std::vector<KnownDivergence> entries_;
};

// '*' matches any (possibly empty) run of characters; everything else matches itself.
bool glob_match(std::string_view pattern, std::string_view text);
// Compares dotted version numbers ("1.13.1", "2.1.0+cpu"): numeric components, missing ones are 0, anything
// after the numbers (local tags, pre-release letters) is ignored. Returns <0, 0, >0.
int compare_versions(std::string_view a, std::string_view b);
// Today's date in UTC as YYYY-MM-DD.
std::string today_utc();

}  // namespace parity::reports
