// A campaign stopped, as SIGINT would stop it, once it has judged a number of cases: how the resume tests make a
// campaign with a journal to go on from.
#pragma once
#include <atomic>
#include <cstdint>

#include "engine/campaign.h"

namespace parity::testing {

class StopAfter : public engine::CampaignObserver {
 public:
  StopAfter(std::uint64_t after, std::atomic<bool>& stop) : after_(after), stop_(stop) {}
  void on_progress(const engine::CampaignProgress& p, bool) override {
    if (p.cases >= after_) stop_ = true;
  }

 private:
  std::uint64_t after_;
  std::atomic<bool>& stop_;
};

}  // namespace parity::testing
