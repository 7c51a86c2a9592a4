// Judging a claim: its program runs on LibTorch and on impl, its check reads each trace, and the two verdicts
// are compared. LibTorch's verdict is the truth about the claim; impl agrees when it reaches the same verdict
// with the same observed value.
#pragma once
#include <string>

#include "judge/backend.h"
#include "cli/claims/claim.h"

namespace parity::cli::claims {

struct SideResult {
  Verdict verdict;
  // Empty when the program ran as the claim intends (only its may_raise steps raised) and the check could read
  // what it needed; otherwise what went wrong. The verdict then does not hold and says the same.
  std::string problem;
  bool ran_as_intended() const { return problem.empty(); }
};

struct ClaimResult {
  SideResult libtorch;
  SideResult impl;
  bool agrees = false;  // same holds and same observed value
};

// What went wrong running `claim`'s program into `trace` (a step outside may_raise raised, or was skipped
// without a may_raise step raising before it); empty when nothing did.
std::string run_problem(const Claim& claim, const judge::Trace& trace);

// The check on one backend's trace, guarded: a run problem or a missing observation gives a failed verdict.
SideResult judge(const Claim& claim, const judge::Trace& trace);
ClaimResult judge(const Claim& claim, const judge::Trace& libtorch, const judge::Trace& impl);
// A side that produced no trace (its process crashed or hung): a failed verdict saying so.
SideResult no_trace(const std::string& why);
ClaimResult combine(SideResult libtorch, SideResult impl);

// Runs the claim on both backends in this process.
ClaimResult evaluate(const Claim& claim, judge::Backend& libtorch, judge::Backend& impl);

}  // namespace parity::cli::claims
