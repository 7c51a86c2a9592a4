// The range of every campaign setting, in one place: what `parity fuzz`'s flags accept, and what a journal read
// back must hold (engine/journal.h). A journal edited by hand, or torn by a disk error, must not run a campaign
// that no command line could start (a negative time limit makes every case a timeout, a memory limit of 1 MiB
// judges no case at all).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/campaign.h"
#include "program/json.h"

namespace parity::engine {

template <class T>
struct SettingRange {
  std::string_view flag;   // `parity fuzz`'s flag; empty for a setting only the generator's defaults give
  std::string_view field;  // the journal's field (engine/journal.cpp), under "campaign"
  T min, max;
};

inline constexpr SettingRange<double> kSecondsRange{"--seconds", "seconds", 0.0, 1e9};
inline constexpr SettingRange<std::uint64_t> kCasesRange{"--cases", "cases", 0, std::uint64_t{1} << 62};
inline constexpr SettingRange<std::uint64_t> kMaxFindingsRange{"--max-findings", "max_findings", 1, UINT64_MAX};
inline constexpr SettingRange<std::uint64_t> kMaxStepsRange{"--max-steps", "max_steps", 1, program::kMaxSteps};
inline constexpr SettingRange<std::uint64_t> kTimeoutMsRange{"--timeout-ms", "timeout_ms", 1, 24ull * 3600 * 1000};
inline constexpr SettingRange<std::uint64_t> kJobsRange{"--jobs", "jobs", 1, 1024};
// 0: no limit. Every command that evaluates programs takes --memory-mb (cli/memory_limit.h).
inline constexpr SettingRange<std::uint64_t> kMemoryMbRange{"--memory-mb", "memory_limit_mb", 0, std::uint64_t{1} << 30};
inline constexpr SettingRange<double> kShrinkShareRange{"--shrink-share", "shrink_share", 0.0, 1.0};
inline constexpr SettingRange<std::uint64_t> kConfirmRunsRange{"--confirm", "confirm_runs", 0, 100};
inline constexpr SettingRange<double> kGuidedShareRange{"--guided-share", "guided_share", 0.0, 1.0};
inline constexpr SettingRange<std::uint64_t> kBackendStartMsRange{"--backend-start-ms", "backend_start_ms", 1,
                                                                  3600 * 1000};
inline constexpr SettingRange<double> kInvalidShareRange{"", "invalid_share", 0.0, 1.0};
inline constexpr SettingRange<double> kSwarmShareRange{"", "swarm_share", 0.0, 1.0};

// Why `c` is no campaign `parity fuzz` could start: one line per setting outside its range, naming the journal's
// field, its value and the range (and the flag that sets it); empty when every setting is within range.
std::vector<std::string> out_of_range_settings(const CampaignConfig& c);

}  // namespace parity::engine
