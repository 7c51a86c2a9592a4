#include "cli/campaign_printer.h"

#include "cli/render.h"
#include "program/internal_assert.h"

namespace parity::cli {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};  // the first stop signal received, for the message that explains the exit status
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
extern "C" void on_stop_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_stop.store(true);
}
}  // namespace

void CampaignPrinter::on_progress(const engine::CampaignProgress& p, bool final) {
  progress_.tick({p.elapsed, p.cases, p.findings, p.groups, p.seconds_budget, p.cases_budget}, final);
  if (final) progress_.finish();
}

void CampaignPrinter::on_finding(const reports::Finding& f) {
  const std::string described = impl_side_.empty()
                                    ? describe_divergence(f.program, f.divergence, f.oracle)
                                    : describe_divergence(f.program, f.divergence, impl_side_, oracle_side_);
  progress_.message("finding: " + described + " [case " +
                    std::to_string(f.case_index) + ", " + std::to_string(f.original_program_size) + " -> " +
                    std::to_string(f.program.steps.size()) + " steps" + (f.expected ? ", expected" : "") +
                    (f.reproducible && f.reproducible->flaky()
                         ? ", flaky: " + std::to_string(f.reproducible->diverged) + "/" +
                               std::to_string(f.reproducible->runs)
                         : "") +
                    "]");
}

StopOnSignals::StopOnSignals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (std::size_t i = 0; i < std::size(engine::kStopSignals); ++i)
    ::sigaction(engine::kStopSignals[i], &sa, &old_[i]);
}

StopOnSignals::~StopOnSignals() {
  for (std::size_t i = 0; i < std::size(engine::kStopSignals); ++i)
    ::sigaction(engine::kStopSignals[i], &old_[i], nullptr);
}

const std::atomic<bool>* StopOnSignals::stop_flag() { return &g_stop; }

std::string StopOnSignals::received() {
  const int sig = g_signal.load();
  if (sig == 0) return "";
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  if (sig == SIGHUP) return "SIGHUP";
  if (sig == SIGUSR1) return "SIGUSR1";
  PARITY_HARNESS_UNREACHABLE("a stop signal handler ran for signal " + std::to_string(sig) +
                             ", which engine::kStopSignals does not list");
}

}  // namespace parity::cli
