#include "cli/claims/evaluate.h"

#include <algorithm>
#include <exception>

namespace parity::cli::claims {

using judge::StepObs;
using judge::Trace;

std::string run_problem(const Claim& claim, const Trace& trace) {
  const auto& steps = claim.program.steps;
  if (trace.steps.size() != steps.size())
    return "the trace has " + std::to_string(trace.steps.size()) + " steps, the program " +
           std::to_string(steps.size());
  bool tolerated_raise = false;  // a may_raise step raised: steps depending on it may be skipped
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepObs& s = trace.steps[i];
    const bool may = std::find(claim.may_raise.begin(), claim.may_raise.end(), static_cast<int>(i)) !=
                     claim.may_raise.end();
    if (s.status == StepObs::Status::Ok) continue;
    if (s.status == StepObs::Status::Error && may) {
      tolerated_raise = true;
      continue;
    }
    if (s.status == StepObs::Status::Skipped && tolerated_raise) continue;
    std::string what = "step " + std::to_string(i) + " (" + std::string(program::spec(steps[i].op).name) + ") " +
                       outcome_of(s);
    if (!s.message.empty()) what += ": " + s.message.substr(0, std::min(s.message.find('\n'), std::size_t{200}));
    return what;
  }
  return "";
}

SideResult no_trace(const std::string& why) {
  SideResult r;
  r.problem = why;
  r.verdict = {false, "not run: " + why};
  return r;
}

SideResult judge(const Claim& claim, const Trace& trace) {
  SideResult r;
  r.problem = run_problem(claim, trace);
  if (!r.problem.empty()) {
    r.verdict = {false, "did not run as intended: " + r.problem};
    return r;
  }
  try {
    r.verdict = claim.check(trace);
  } catch (const MissingObservation& e) {
    r.problem = std::string("the check could not read the trace: ") + e.what();
    r.verdict = {false, r.problem};
  } catch (const std::exception& e) {
    r.problem = std::string("the check failed: ") + e.what();
    r.verdict = {false, r.problem};
  }
  return r;
}

ClaimResult combine(SideResult libtorch, SideResult impl) {
  ClaimResult r;
  r.libtorch = std::move(libtorch);
  r.impl = std::move(impl);
  r.agrees = r.libtorch.verdict == r.impl.verdict;
  return r;
}

ClaimResult judge(const Claim& claim, const Trace& libtorch, const Trace& impl) {
  return combine(judge(claim, libtorch), judge(claim, impl));
}

ClaimResult evaluate(const Claim& claim, judge::Backend& libtorch, judge::Backend& impl) {
  auto side = [&](judge::Backend& b) {
    try {
      return judge(claim, judge::run(b, claim.program));
    } catch (const std::exception& e) {
      return no_trace(std::string("the run escaped with an exception: ") + e.what());
    }
  };
  SideResult t = side(libtorch);
  SideResult i = side(impl);
  return combine(std::move(t), std::move(i));
}

}  // namespace parity::cli::claims
