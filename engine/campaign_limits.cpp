#include "engine/campaign_limits.h"

#include "program/types.h"

namespace parity::engine {

namespace {

std::string where(std::string_view field, std::string_view flag) {
  return "campaign." + std::string(field) + (flag.empty() ? "" : " (" + std::string(flag) + ")");
}

void check(std::vector<std::string>& out, const SettingRange<double>& r, double v) {
  if (!(v >= r.min && v <= r.max))  // NaN is outside too
    out.push_back(where(r.field, r.flag) + " is " + program::render_number(v) + ", outside " +
                  program::render_number(r.min) + " to " + program::render_number(r.max));
}

// Signed values too: a count read back may be negative.
void check(std::vector<std::string>& out, const SettingRange<std::uint64_t>& r, std::int64_t v) {
  if (v < 0 || static_cast<std::uint64_t>(v) < r.min || static_cast<std::uint64_t>(v) > r.max)
    out.push_back(where(r.field, r.flag) + " is " + std::to_string(v) + ", outside " + std::to_string(r.min) +
                  " to " + std::to_string(r.max));
}

void check(std::vector<std::string>& out, const SettingRange<std::uint64_t>& r, std::uint64_t v) {
  if (v < r.min || v > r.max)
    out.push_back(where(r.field, r.flag) + " is " + std::to_string(v) + ", outside " + std::to_string(r.min) +
                  " to " + std::to_string(r.max));
}

}  // namespace

std::vector<std::string> out_of_range_settings(const CampaignConfig& c) {
  std::vector<std::string> out;
  if (c.seconds) check(out, kSecondsRange, *c.seconds);
  if (c.cases) check(out, kCasesRange, *c.cases);
  if (c.max_findings) check(out, kMaxFindingsRange, *c.max_findings);
  check(out, kMaxStepsRange, std::int64_t{c.generator.max_steps});
  check(out, kTimeoutMsRange, static_cast<std::int64_t>(c.timeout.count()));
  check(out, kJobsRange, std::int64_t{c.jobs});
  check(out, kMemoryMbRange, static_cast<std::uint64_t>(c.memory_limit_bytes >> 20));
  check(out, kShrinkShareRange, c.shrink_share);
  check(out, kConfirmRunsRange, std::int64_t{c.confirm_runs});
  check(out, kGuidedShareRange, c.guided_share);
  check(out, kBackendStartMsRange, static_cast<std::int64_t>(c.sides.start_timeout.count()));
  check(out, kInvalidShareRange, c.generator.invalid_share);
  check(out, kSwarmShareRange, c.generator.swarm_share);
  return out;
}

}  // namespace parity::engine
