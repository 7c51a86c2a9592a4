// A campaign setting's flag, read within the range engine/campaign_limits.h gives it: the one range a command line
// and a journal read back are both held to.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "cli/args.h"
#include "engine/campaign_limits.h"

namespace parity::cli {

inline std::optional<std::uint64_t> uint64_in(const Args& args, const engine::SettingRange<std::uint64_t>& r) {
  return args.uint64(std::string(r.flag), r.min, r.max);
}

inline std::optional<double> number_in(const Args& args, const engine::SettingRange<double>& r) {
  return args.number(std::string(r.flag), r.min, r.max);
}

}  // namespace parity::cli
