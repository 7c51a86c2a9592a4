#include "engine/drift.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <map>

#include "engine/case_seed.h"
#include "engine/isolation.h"
#include "engine/shrink.h"
#include "engine/trace_worker.h"
#include "judge/compare.h"
#include "oracle/torch_backend.h"
#include "program/internal_assert.h"
#include "reports/build_info.h"
#include "reports/jsonl.h"

namespace parity::engine {

namespace {

using Clock = std::chrono::steady_clock;
using judge::Divergence;
using judge::DivergenceKind;
using program::Program;

std::string this_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw EvaluationError("cannot find this parity binary (/proc/self/exe) to start its worker");
  return std::string(path, static_cast<std::size_t>(n));
}

// A side that has no trace, as a divergence's text and kind.
DivergenceKind kind_of(const TraceAnswer& a) {
  switch (a.process.kind) {
    case ProcessOutcome::Kind::Timeout: return DivergenceKind::Timeout;
    case ProcessOutcome::Kind::OutOfMemory: return DivergenceKind::OutOfMemory;
    case ProcessOutcome::Kind::Answered:  // with an exception that escaped the run loop instead of a trace
    case ProcessOutcome::Kind::Crash:
    case ProcessOutcome::Kind::Interrupted: return DivergenceKind::Crash;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

// Whether two sides without a trace failed alike (then it is no drift): the same end, an escape on both.
bool failed_alike(const TraceAnswer& a, const TraceAnswer& b) {
  return a.process.kind == b.process.kind && a.escaped.empty() == b.escaped.empty();
}

Evaluation::Outcome outcome_of(DivergenceKind kind) {
  if (kind == DivergenceKind::Timeout) return Evaluation::Outcome::Timeout;
  if (kind == DivergenceKind::OutOfMemory) return Evaluation::Outcome::OutOfMemory;
  return Evaluation::Outcome::Crash;
}

class Drift {
 public:
  Drift(const DriftConfig& c, const std::atomic<bool>* stop, CampaignObserver* observer)
      : c_(c),
        stop_(stop),
        observer_(observer),
        writer_(c_.out / "findings.jsonl"),
        self_(this_executable(), c_.timeout, c_.memory_limit_bytes, stop),
        other_(c_.other_parity, c_.timeout, c_.memory_limit_bytes, stop) {
    summary_.libtorch_version = oracle::torch_version();
    summary_.parity_commit = std::string(reports::parity_commit());
    summary_.generator_version = generators::generator_version();
    summary_.seed = c_.seed;
    summary_.budget = {c_.cases, c_.seconds};
    summary_.max_steps = c_.generator.max_steps;
    summary_.timeout_ms = static_cast<int>(c_.timeout.count());
    summary_.jobs = 2;  // one worker per LibTorch, side by side
    summary_.memory_limit_mb = c_.memory_limit_bytes >> 20;
    summary_.coverage = reports::Coverage::zeroed();
    summary_.drift = reports::RunSummary::Drift{"", c_.other_parity};
  }

  reports::RunSummary run() {
    start_ = Clock::now();
    for (std::uint64_t k = 0;; ++k) {
      if (stopped() || (c_.cases && k >= *c_.cases) || (c_.seconds && elapsed() >= *c_.seconds)) break;
      rc::Shrinkable<Program> generated = generate_case(c_.seed, k, c_.generator);
      const Program program = generated.value();
      Evaluation ev = evaluate(program);
      if (ev.outcome == Evaluation::Outcome::Interrupted) break;
      ++summary_.cases;
      if (ev.outcome == Evaluation::Outcome::Crash) ++summary_.crashes;
      if (ev.outcome == Evaluation::Outcome::Timeout) ++summary_.timeouts;
      if (ev.outcome == Evaluation::Outcome::OutOfMemory) ++summary_.out_of_memory;
      if (ev.divergence) on_divergence(k, std::move(generated), program, std::move(ev));
      if (observer_) observer_->on_progress(progress(), false);
    }
    summary_.interrupted = stopped();
    summary_.seconds = elapsed();
    summary_.cases_per_second = summary_.seconds > 0 ? static_cast<double>(summary_.cases) / summary_.seconds : 0;
    summary_.drift->other_libtorch_version = other_.libtorch_version();
    if (observer_) observer_->on_progress(progress(), true);
    reports::write_run_summary(c_.out / "run.json", summary_);
    return summary_;
  }

 private:
  bool stopped() const { return stop_ && stop_->load(); }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  CampaignProgress progress() const {
    return {elapsed(), summary_.cases, summary_.findings, summary_.groups.size(), c_.seconds, c_.cases};
  }

  // Both LibTorch traces of `p`, run side by side; this build's on the impl side, the other's on the oracle side.
  Evaluation evaluate(const Program& p) {
    self_.send(p);
    other_.send(p);
    TraceAnswer mine = self_.receive();
    TraceAnswer theirs = other_.receive();
    Evaluation ev;
    ev.impl_version = summary_.libtorch_version;
    ev.oracle_version = other_.libtorch_version();
    if (mine.process.kind == ProcessOutcome::Kind::Interrupted ||
        theirs.process.kind == ProcessOutcome::Kind::Interrupted) {
      ev.outcome = Evaluation::Outcome::Interrupted;
      return ev;
    }
    if (mine.trace && theirs.trace) {
      ev.divergence = judge::compare(*mine.trace, *theirs.trace);
      ev.impl = std::move(mine.trace);
      ev.oracle = std::move(theirs.trace);
      return ev;
    }
    // A release that crashed, hung or let an exception escape where the other did the same is no drift.
    if (!mine.trace && !theirs.trace && failed_alike(mine, theirs)) return ev;
    const TraceAnswer& failed = mine.trace ? theirs : mine;
    ev.outcome = outcome_of(kind_of(failed));
    Divergence d;
    d.kind = kind_of(failed);
    d.step = -1;  // another build's worker does not say where it was
    d.impl = mine.failure();
    d.oracle = theirs.failure();
    if (d.kind == DivergenceKind::Crash) d.signal = failed.process.signal;
    ev.divergence = d;
    ev.impl = std::move(mine.trace);
    ev.oracle = std::move(theirs.trace);
    return ev;
  }

  double shrink_allowance() const {
    if (c_.shrink_share <= 0) return 0;
    const double base = c_.seconds ? *c_.seconds : elapsed();
    return std::max(kMinShrinkSeconds, c_.shrink_share * base) - summary_.shrink_seconds;
  }

  void on_divergence(std::uint64_t k, rc::Shrinkable<Program> generated, const Program& program, Evaluation ev) {
    const Divergence d = *ev.divergence;
    const judge::Signature sig = judge::signature(program, d);
    ++summary_.findings;
    ++summary_.unexpected_findings;  // no ledger applies between two releases: every difference is shown
    reports::FindingGroup& group = summary_.groups[sig];
    group.add_case(k);
    ++summary_.findings_by_kind[d.kind];
    if (recorded_[sig] >= kMaxRecordedPerSignature) return;

    reports::Finding f = case_finding(summary_, c_.seed, k, sig);
    auto evaluate_all = [this](const std::vector<Program>& ps) {
      std::vector<Evaluation> out;
      for (const Program& p : ps) out.push_back(evaluate(p));
      return out;
    };
    shrink_into_finding(f, std::move(generated), program, std::move(ev), evaluate_all, shrink_allowance(), stop_, 1,
                        summary_);
    writer_.append(to_json(f));
    group.offer(k, f.program);
    ++recorded_[sig];
    ++summary_.recorded_findings;
    if (observer_) observer_->on_finding(f);
  }

  const DriftConfig& c_;
  const std::atomic<bool>* stop_;
  CampaignObserver* observer_;
  reports::JsonlWriter writer_;
  TraceWorker self_;
  TraceWorker other_;
  reports::RunSummary summary_;
  std::map<judge::Signature, int> recorded_;
  Clock::time_point start_;
};

}  // namespace

reports::RunSummary run_drift(const DriftConfig& config, const std::atomic<bool>* stop, CampaignObserver* observer) {
  return Drift(config, stop, observer).run();
}

}  // namespace parity::engine
