#include "engine/campaign.h"

#include <map>

#include "engine/case_seed.h"
#include "engine/evaluate.h"
#include "engine/isolation.h"
#include "engine/shrink.h"
#include "impl_backend/planted_faults.h"
#include "oracle/torch_backend.h"
#include "program/compare.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/jsonl.h"

namespace parity::engine {

namespace {

using Clock = std::chrono::steady_clock;
using program::Divergence;
using program::Program;

class Campaign {
 public:
  Campaign(const CampaignConfig& c, const reports::KnownDivergences& known, const std::atomic<bool>* stop,
           CampaignObserver* observer)
      : c_(c), known_(known), stop_(stop), observer_(observer), writer_(c_.out / "findings.jsonl") {
    summary_.libtorch_version = oracle::torch_version();
    summary_.parity_commit = std::string(reports::parity_commit());
    summary_.generator_version = generators::generator_version();
    summary_.planted_faults = impl_backend::planted_fault_texts();
    summary_.seed = c_.seed;
    summary_.shard = c_.shard;
    summary_.max_steps = c_.generator.max_steps;
    summary_.timeout_ms = static_cast<int>(c_.timeout.count());
    summary_.coverage = reports::Coverage::zeroed();
    today_ = reports::today_utc();
    // Every entry in force starts at 0, so an entry nothing matched is visible in run.json.
    for (const auto& k : known_.entries())
      if (reports::KnownDivergences::applies(k, summary_.libtorch_version, today_))
        summary_.known_divergence_hits[k.signature] = 0;
  }

  CampaignResult run() {
    start_ = Clock::now();
    for (std::uint64_t k = static_cast<std::uint64_t>(summary_.shard.index);;
         k += static_cast<std::uint64_t>(summary_.shard.total)) {
      if (stopped()) break;
      if (c_.cases && k >= *c_.cases) break;
      if (c_.seconds && elapsed() >= *c_.seconds) break;
      if (!run_case(k)) break;
      if (observer_) observer_->on_progress(progress(), false);
    }
    summary_.interrupted = stopped();
    summary_.seconds = elapsed();
    summary_.cases_per_second = summary_.seconds > 0 ? static_cast<double>(summary_.cases) / summary_.seconds : 0;
    if (observer_) observer_->on_progress(progress(), true);
    reports::write_run_summary(c_.out / "run.json", summary_);
    return {summary_, today_};
  }

 private:
  bool stopped() const { return stop_ && stop_->load(); }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  CampaignProgress progress() const {
    CampaignProgress p{elapsed(), summary_.cases, summary_.findings, summary_.groups.size(), c_.seconds, {}};
    // This shard runs the indices k < cases with k % total == index.
    if (c_.cases) {
      const auto total = static_cast<std::uint64_t>(summary_.shard.total);
      const auto index = static_cast<std::uint64_t>(summary_.shard.index);
      p.cases_budget = *c_.cases > index ? (*c_.cases - index + total - 1) / total : 0;
    }
    return p;
  }

  EvalOptions eval_options() const { return {c_.timeout, false, stop_}; }

  static Program value_of(const rc::Shrinkable<Program>& s, std::uint64_t k) {
    try {
      return s.value();
    } catch (const std::exception& e) {
      throw EvaluationError("the generator failed for case " + std::to_string(k) + ": " + e.what());
    }
  }

  // Returns false when the campaign was interrupted during the case.
  bool run_case(std::uint64_t k) {
    rc::Shrinkable<Program> shrinkable = generate_case(c_.seed, k, c_.generator);
    Program program = value_of(shrinkable, k);
    Evaluation ev = evaluate_isolated(program, eval_options());
    if (ev.outcome == Evaluation::Outcome::Interrupted) return false;
    ++summary_.cases;
    count(program, ev);
    if (ev.divergence) on_divergence(k, shrinkable, program, std::move(ev));
    return true;
  }

  void count(const Program& program, const Evaluation& ev) {
    reports::Coverage& coverage = summary_.coverage;
    for (std::size_t i = 0; i < program.steps.size(); ++i) {
      const std::string name(program::spec(program.steps[i].op).name);
      auto& c = summary_.ops[name];
      ++c.generated;
      if (i >= ev.steps.size()) continue;
      const StepOutcome& s = ev.steps[i];
      switch (s.oracle) {
        case program::StepObs::Status::Ok:
          ++c.ok;
          ++coverage.ops[name];
          break;
        case program::StepObs::Status::Error:
          ++c.raised;
          ++coverage.error_categories[std::string(program::to_string(s.oracle_category))];
          break;
        case program::StepObs::Status::Skipped: ++c.skipped; break;
      }
      if (s.impl == program::StepObs::Status::Error && s.oracle == program::StepObs::Status::Error &&
          s.impl_category == s.oracle_category)
        ++summary_.error_categories[std::string(program::to_string(s.oracle_category))];
    }
    auto add = [](reports::Coverage::Counts& counts, const std::vector<std::string>& tags) {
      for (const auto& t : tags) ++counts[t];
    };
    add(coverage.layouts, ev.coverage.layouts);
    add(coverage.memory_formats, ev.coverage.memory_formats);
    add(coverage.situations, ev.coverage.situations);
    if (ev.outcome == Evaluation::Outcome::Crash) ++summary_.crashes;
    if (ev.outcome == Evaluation::Outcome::Timeout) ++summary_.timeouts;
  }

  void on_divergence(std::uint64_t k, const rc::Shrinkable<Program>& shrinkable, const Program& program,
                     Evaluation ev) {
    const Divergence d = *ev.divergence;
    const program::Signature sig = program::signature(program, d);
    const auto* known = known_.match(sig, summary_.libtorch_version, today_);
    if (known) ++summary_.known_divergence_hits[known->signature];
    ++summary_.findings;
    reports::FindingGroup& group = summary_.groups[sig];
    group.add_case(k);
    group.expected = known != nullptr;
    group.known_reason = known ? known->reason : "";
    ++summary_.findings_by_kind[d.kind];
    ++(known ? summary_.expected_findings : summary_.unexpected_findings);
    if (recorded_[sig] >= kMaxRecordedPerSignature) return;

    reports::Finding f;
    f.parity_commit = summary_.parity_commit;
    f.generator_version = summary_.generator_version;
    f.libtorch_version = summary_.libtorch_version;
    f.device = summary_.device;
    f.planted_faults = summary_.planted_faults;
    f.seed = c_.seed;
    f.case_index = k;
    f.case_seed = case_seed(c_.seed, k);
    f.size = case_size(k);
    f.signature = sig;
    f.expected = known != nullptr;
    f.known_reason = known ? known->reason : "";
    f.original_program_size = program.steps.size();
    f.program = program;
    // A hang is not shrunk: every candidate could cost a full time limit.
    if (ev.outcome != Evaluation::Outcome::Timeout) {
      const EvalOptions options = eval_options();
      Shrunk s = shrink(shrinkable, program, std::move(ev), sig,
                        [&](const Program& p) { return evaluate_isolated(p, options); },
                        {kMaxShrinkEvaluations, kMaxShrinkSeconds, stop_});
      f.program = std::move(s.program);
      f.shrink_evaluations = s.evaluations;
      ev = std::move(s.evaluation);
    }
    f.divergence = *ev.divergence;
    f.severity = f.divergence.severity;
    f.impl_trace = std::move(ev.impl);
    f.oracle_trace = std::move(ev.oracle);
    writer_.append(to_json(f));
    group.offer(k, f.program);
    ++recorded_[sig];
    ++summary_.recorded_findings;
    if (observer_) observer_->on_finding(f);
  }

  const CampaignConfig& c_;
  const reports::KnownDivergences& known_;
  const std::atomic<bool>* stop_;
  CampaignObserver* observer_;
  reports::JsonlWriter writer_;
  reports::RunSummary summary_;
  std::map<program::Signature, int> recorded_;
  std::string today_;
  Clock::time_point start_;
};

}  // namespace

void prepare_output(const std::filesystem::path& out, bool overwrite) {
  std::error_code ec;
  // findings.jsonl is appended to as findings come: a second campaign into one folder would mix with the first.
  for (const char* name : {"run.json", "findings.jsonl", "report.html"}) {
    if (!std::filesystem::exists(out / name, ec)) continue;
    if (!overwrite)
      throw reports::ReportError(out.string() + " already holds a campaign's output (" + name +
                                 "): give another --out, or --overwrite to replace it");
    if (!std::filesystem::remove(out / name, ec) || ec)
      throw reports::ReportError((out / name).string() + ": cannot remove it" + (ec ? ": " + ec.message() : ""));
  }
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw reports::ReportError(out.string() + ": cannot create the output folder" +
                               (ec ? ": " + ec.message() : std::string()));
}

CampaignResult run_campaign(const CampaignConfig& config, const reports::KnownDivergences& known,
                            const std::atomic<bool>* stop, CampaignObserver* observer) {
  return Campaign(config, known, stop, observer).run();
}

std::vector<StaleKnownEntry> stale_known_entries(const reports::KnownDivergences& known,
                                                 const reports::RunSummary& summary, std::string_view today) {
  std::vector<StaleKnownEntry> out;
  for (const auto& k : known.entries()) {
    std::string why;
    if (today > k.expires) {
      why = "expired on " + k.expires + ": review it again";
    } else if (reports::KnownDivergences::applies(k, summary.libtorch_version, today)) {
      const auto hits = summary.known_divergence_hits.find(k.signature);
      if (hits == summary.known_divergence_hits.end() || hits->second == 0)
        why = "matched no finding in this run: remove it if LibTorch or impl changed, or run longer";
    }
    if (!why.empty()) out.push_back({&k, std::move(why)});
  }
  return out;
}

}  // namespace parity::engine
