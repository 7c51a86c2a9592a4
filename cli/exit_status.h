// The exit statuses of the commands that run campaigns (`parity fuzz`, `parity drift`), one per verdict, so that a
// script or CI job can tell a failed run from one that was cut short or tested nothing. `parity fuzz --help`,
// README.md and ci/campaign.sh document them; 2 (bad usage or setup) and 70 (a bug in parity) come from main.
#pragma once
#include <optional>
#include <string_view>

#include "reports/run_summary.h"

namespace parity::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUnexpectedFindings = 1;  // drift: the two releases differ
inline constexpr int kExitStarved = 3;             // --require-coverage
inline constexpr int kExitStaleLedger = 4;         // --strict-known
inline constexpr int kExitInterrupted = 5;         // a stop signal ended the run before its budget was spent
inline constexpr int kExitNoCases = 6;             // the budget gave this process no case to run
inline constexpr int kExitNoDevice = 7;            // --device cuda where impl or LibTorch has no CUDA device

// A run that is no verdict on its budget: stopped by a stop signal (kExitInterrupted), or one that ran no case
// (kExitNoCases). Says why on stderr, as `command` ("parity fuzz"), and returns that status; nullopt for a run
// that spent its budget. Unexpected findings outrank both (a finding stands however the run ended), and both
// outrank coverage and the ledger, which only a whole run can judge: `found` says the command exits
// kExitUnexpectedFindings all the same, and the message names that status.
std::optional<int> unfinished_run_status(std::string_view command, const reports::RunSummary& summary, bool found);

}  // namespace parity::cli
