// What `parity fuzz` and `parity drift` show while they run: the progress line, each finding as it is recorded,
// and the stop flag that the stop signals raise so that a run ends cleanly (its output written) when interrupted.
#pragma once
#include <signal.h>

#include <atomic>
#include <iterator>
#include <string>

#include "cli/progress.h"
#include "engine/campaign.h"
#include "engine/isolation.h"

namespace parity::cli {

class CampaignPrinter : public engine::CampaignObserver {
 public:
  CampaignPrinter() = default;
  // Sides named in each finding's line in place of "impl" and the oracle's name: a drift's two releases, two
  // protocol backends' libraries.
  CampaignPrinter(std::string impl_side, std::string oracle_side)
      : impl_side_(std::move(impl_side)), oracle_side_(std::move(oracle_side)) {}
  void on_progress(const engine::CampaignProgress& p, bool final) override;
  void on_finding(const reports::Finding& f) override;
  void message(const std::string& text) { progress_.message(text); }

 private:
  ProgressLine progress_;
  std::string impl_side_, oracle_side_;  // empty: "impl" and the finding's oracle
};

// While it lives, the stop signals (engine::kStopSignals: SIGINT, SIGTERM, SIGHUP, SIGUSR1) set stop_flag() instead
// of killing the process; it restores the previous handlers. Installed without SA_RESTART: a blocked poll or read
// returns, and the loop sees the flag at once.
class StopOnSignals {
 public:
  StopOnSignals();
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  static const std::atomic<bool>* stop_flag();
  // The stop signal that came first, as "SIGTERM"; empty when none came.
  static std::string received();

 private:
  struct sigaction old_[std::size(engine::kStopSignals)] {};
};

}  // namespace parity::cli
