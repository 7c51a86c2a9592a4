#include "cli/exit_status.h"

#include <cstdio>
#include <string>

#include "cli/campaign_printer.h"

namespace parity::cli {

namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Why a run that was not interrupted ran no case, naming the flag to change.
std::string why_no_case(const reports::RunSummary& s) {
  const reports::Budget& b = s.budget;
  if (b.cases && reports::cases_in_shard(*b.cases, s.shard) == 0) {
    const std::string n = std::to_string(*b.cases);
    if (*b.cases == 0) return "--cases 0 asks for none";
    return "--cases " + n + " gives shard " + std::to_string(s.shard.index) + " of " + std::to_string(s.shard.total) +
           " no case (a shard runs the k < " + n + " with k % " + std::to_string(s.shard.total) + " == " +
           std::to_string(s.shard.index) + "): give more cases or fewer shards";
  }
  if (b.seconds) return "--seconds " + seconds_text(*b.seconds) + " ran out before the first case started";
  return "the budget gave this process no case";
}

}  // namespace

std::optional<int> unfinished_run_status(std::string_view command, const reports::RunSummary& s, bool found) {
  const std::string name(command);
  // The status the command exits with, as the message says it: its findings, when it has some, decide it.
  auto exit_text = [&](int status) {
    return found ? "exit " + std::to_string(kExitUnexpectedFindings) + ", for its findings"
                 : "exit " + std::to_string(status);
  };
  if (s.interrupted) {
    const std::string signal = StopOnSignals::received();
    std::string done = std::to_string(s.cases);
    if (s.budget.cases) done += " of its " + std::to_string(reports::cases_in_shard(*s.budget.cases, s.shard));
    done += " cases";
    if (s.budget.seconds) {
      char elapsed[32];
      std::snprintf(elapsed, sizeof elapsed, "%.1f", s.seconds);
      done += std::string(", ") + elapsed + " s of its " + seconds_text(*s.budget.seconds) + " s";
    }
    std::fprintf(stderr,
                 "%s: stopped by %s after %s: the run is partial (run.json \"interrupted\"), so coverage and the "
                 "ledger are not judged (%s)\n",
                 name.c_str(), signal.empty() ? "a signal" : signal.c_str(), done.c_str(),
                 exit_text(kExitInterrupted).c_str());
    std::fflush(stderr);
    return kExitInterrupted;
  }
  if (s.cases == 0) {
    std::fprintf(stderr, "%s: no case ran: %s; a run that tests nothing fails (%s)\n", name.c_str(),
                 why_no_case(s).c_str(), exit_text(kExitNoCases).c_str());
    std::fflush(stderr);
    return kExitNoCases;
  }
  return std::nullopt;
}

}  // namespace parity::cli
