#include "engine/campaign.h"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>

#include "engine/case_seed.h"
#include "engine/corpus.h"
#include "engine/evaluate.h"
#include "engine/isolation.h"
#include "engine/journal.h"
#include "engine/shrink.h"
#include "engine/worker_pool.h"
#include "generators/shrink.h"
#include "impl_backend/planted_faults.h"
#include "judge/compare.h"
#include "judge/error_category.h"
#include "oracle/torch_backend.h"
#include "program/internal_assert.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/jsonl.h"

namespace parity::engine {

namespace {

using Clock = std::chrono::steady_clock;
using judge::Divergence;
using program::Program;
using Ticket = WorkerPool::Ticket;

// How often a campaign rewrites its journal between findings: the most work a kill can cost a --resume.
constexpr auto kCheckpointEvery = std::chrono::seconds(1);

// The coverage keys a selection leaves out of reach: its ops' (run, and backward through) and its dtypes'.
std::set<std::string> unreachable_keys(const generators::Selection& s) {
  std::set<std::string> out;
  if (s.everything()) return out;
  for (const program::OpSpec& op : program::op_table())
    if (!s.ops.empty() && !s.ops[static_cast<std::size_t>(op.id)]) {
      out.insert("ops." + std::string(op.name));
      out.insert("backward_through." + std::string(op.name));
    }
  if (!s.dtypes.empty())
    for (program::DType d : program::kAllDTypes)
      if (std::find(s.dtypes.begin(), s.dtypes.end(), d) == s.dtypes.end())
        out.insert("dtypes." + std::string(program::to_string(d)));
  return out;
}

// Case k's program, from its shrink tree.
Program value_of(const rc::Shrinkable<Program>& s, std::uint64_t k) {
  try {
    return s.value();
  } catch (const std::exception& e) {
    throw EvaluationError("the generator failed for case " + std::to_string(k) + ": " + e.what());
  }
}

// Where a campaign's programs are evaluated: the worker pool, or (Isolation::Fork) a child forked for each
// program, one at a time, in the order submitted.
class Runner {
 public:
  Runner(const CampaignConfig& c, EvalOptions options) : options_(options) {
    if (c.isolation == Isolation::Workers) pool_.emplace(WorkerOptions{c.jobs, options});
  }
  Ticket submit(Program p) {
    if (pool_) return pool_->submit(std::move(p));
    queue_.push_back({next_++, std::move(p)});
    return queue_.back().first;
  }
  // A child forked per case gets the program from here; a worker generates it.
  Ticket submit(const GeneratedCase& c) {
    if (pool_) return pool_->submit(c);
    return submit(value_of(generate_case(c.seed, c.k, c.config), c.k));
  }
  std::size_t capacity() const { return pool_ ? pool_->capacity() : 1; }
  // The next evaluation to finish; nullopt when nothing was submitted that has not been returned.
  std::optional<WorkerPool::Done> wait() {
    if (pool_) return pool_->wait();
    if (queue_.empty()) return std::nullopt;
    auto [ticket, program] = std::move(queue_.front());
    queue_.pop_front();
    return WorkerPool::Done{ticket, evaluate_isolated(program, options_)};
  }

 private:
  EvalOptions options_;
  std::optional<WorkerPool> pool_;
  std::deque<std::pair<Ticket, Program>> queue_;
  Ticket next_ = 0;
};

// The per-step counts of every case, by op and error category (the hot path of the campaign's own process),
// folded into the summary's maps by name once, at the end.
struct StepTally {
  static constexpr std::size_t kCategories = judge::kErrorCategoryCount;
  std::vector<reports::OpCounts> ops = std::vector<reports::OpCounts>(program::op_table().size());
  std::array<std::uint64_t, kCategories> raised{};  // steps that raised on LibTorch, by its category
  std::array<std::uint64_t, kCategories> agreed{};  // steps that raised on both sides in the same category

  void fold_into(reports::RunSummary& summary) const {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const reports::OpCounts& c = ops[i];
      if (c.generated == 0) continue;
      const std::string name(program::spec(static_cast<program::OpId>(i)).name);
      reports::OpCounts& into = summary.ops[name];
      into.generated += c.generated;
      into.ok += c.ok;
      into.raised += c.raised;
      into.skipped += c.skipped;
      if (c.ok > 0) summary.coverage.ops[name] += c.ok;
    }
    for (std::size_t i = 0; i < kCategories; ++i) {
      const std::string name(judge::to_string(static_cast<judge::ErrorCategory>(i)));
      if (raised[i] > 0) summary.coverage.error_categories[name] += raised[i];
      if (agreed[i] > 0) summary.error_categories[name] += agreed[i];
    }
  }
};

// The ledger records where impl differs from LibTorch: a campaign judged by impl has none of it in force.
const reports::KnownDivergences& ledger_for(reports::Oracle oracle, const reports::KnownDivergences& known) {
  static const reports::KnownDivergences none;
  return oracle == reports::Oracle::LibTorch ? known : none;
}

class Campaign {
 public:
  Campaign(const CampaignConfig& c, const reports::KnownDivergences& known, const std::atomic<bool>* stop,
           CampaignObserver* observer, const Journal* resume)
      : c_(c),
        known_(ledger_for(c.oracle, known)),
        stop_(stop),
        observer_(observer),
        writer_(c_.out / "findings.jsonl"),
        runner_(c_, {.timeout = c_.timeout, .stop = stop_, .memory_limit_bytes = c_.memory_limit_bytes,
                     .oracle = c_.oracle, .sides = c_.sides}),
        corpus_(initial_corpus(c_, resume)),
        corpus_log_(c_.out / kCorpusLogFile) {
    // The judge's release, which the ledger's version ranges are about: a protocol oracle's own (PyTorch's
    // Python API of some pip release, say).
    summary_.libtorch_version = c_.backends && !c_.backends->oracle.command.empty() ? c_.backends->oracle.version
                                                                                    : oracle::torch_version();
    summary_.parity_commit = std::string(reports::parity_commit());
    summary_.generator_version = generators::generator_version();
    summary_.planted_faults = impl_backend::planted_fault_texts();
    record_settings(c_, summary_);
    summary_.backends = c_.backends;
    summary_.coverage = reports::Coverage::zeroed();
    summary_.coverage.not_goals = unreachable_keys(c_.generator.selection);
    today_ = reports::today_utc();
    // Every entry in force starts at 0, so an entry nothing matched is visible in run.json.
    for (const auto& k : known_.entries())
      if (reports::KnownDivergences::applies(k, summary_.libtorch_version, today_))
        summary_.known_divergence_hits[k.signature] = 0;
    if (resume) go_on_from(*resume);
  }

  // Cases are handed out in index order, enough to keep every worker busy, and judged (counted, shrunk,
  // recorded) strictly in index order, whatever order they finish in.
  CampaignResult run() {
    start_ = Clock::now();
    const auto total = static_cast<std::uint64_t>(summary_.shard.total);
    const std::size_t window = runner_.capacity() + static_cast<std::size_t>(summary_.jobs);
    std::uint64_t next_to_start = next_case_;
    std::uint64_t next_to_judge = next_to_start;
    if (pending_) record_pending();
    checkpoint(next_to_judge);
    bool starting = true, interrupted = false;
    while (!interrupted) {
      while (starting && cases_in_flight_.size() + ready_.size() < window) {
        if (stopped() || (c_.cases && next_to_start >= *c_.cases) || (c_.seconds && elapsed() >= *c_.seconds)) {
          starting = false;
          break;
        }
        if (!corpus_.may_start(next_to_start, next_to_judge)) break;
        start_case(next_to_start);
        next_to_start += total;
      }
      if (cases_in_flight_.empty() && ready_.empty()) break;
      auto it = ready_.find(next_to_judge);
      if (it == ready_.end()) {
        wait_for_one();
        continue;
      }
      Evaluation ev = std::move(it->second);
      ready_.erase(it);
      if (ev.outcome == Evaluation::Outcome::Interrupted) {
        interrupted = true;
        break;
      }
      judge(next_to_judge, std::move(ev), next_to_judge + total);
      next_to_judge += total;
      // Enough unexpected findings: the cases still in flight are dropped, judged by nobody, and the run is
      // complete (budget.max_findings says why it ended before its cases or seconds).
      if (c_.max_findings && summary_.unexpected_findings >= *c_.max_findings) break;
      if (Clock::now() - last_checkpoint_ >= kCheckpointEvery) checkpoint(next_to_judge);
      if (observer_) observer_->on_progress(progress(), false);
    }
    summary_.interrupted = stopped() || interrupted;
    // A stopped campaign keeps its journal, up to date, for --resume; a complete one is all in run.json.
    if (summary_.interrupted) checkpoint(next_to_judge);
    summary_.seconds = elapsed();
    summary_.cases_per_second = summary_.seconds > 0 ? static_cast<double>(summary_.cases) / summary_.seconds : 0;
    tally_.fold_into(summary_);
    if (observer_) observer_->on_progress(progress(), true);
    if (!summary_.interrupted && c_.corpus_dir) save_corpus();
    reports::write_run_summary(c_.out / "run.json", summary_);
    if (!summary_.interrupted) {
      remove_journal(c_.out);
      std::error_code ec;  // a log left behind holds nothing run.json lacks; the next campaign refuses the folder
      std::filesystem::remove(c_.out / kCorpusLogFile, ec);
    }
    return {summary_, today_};
  }

 private:
  bool stopped() const { return stop_ && stop_->load(); }

  // Case k goes to the runner: the generator's program (a worker makes it), or what the corpus plans for it.
  void start_case(std::uint64_t k) {
    auto planned = corpus_.plan(c_.seed, k);
    if (!planned) {
      cases_in_flight_.emplace(runner_.submit(GeneratedCase{c_.seed, k, c_.generator}), k);
      return;
    }
    cases_in_flight_.emplace(runner_.submit(planned->program), k);
    planned_.emplace(k, std::move(*planned));
  }

  // Where the corpus starts: the folder's programs, or (resuming) what the log says the killed run had built.
  static Corpus initial_corpus(const CampaignConfig& c, const Journal* resume) {
    if (resume)
      return Corpus::restore(c.out / kCorpusLogFile, resume->next_case, c.shard, c.guided_share, c.generator);
    std::vector<Program> loaded;
    if (c.corpus_dir) loaded = read_corpus_folder(*c.corpus_dir, c.generator);
    return Corpus(std::move(loaded), c.shard, c.guided_share, c.generator);
  }

  // A complete campaign's additions to the corpus folder: what reached a key first, and its unexpected findings.
  void save_corpus() {
    std::vector<Program> programs = corpus_.added();
    programs.insert(programs.end(), unexpected_programs_.begin(), unexpected_programs_.end());
    summary_.guidance.saved = write_corpus_folder(*c_.corpus_dir, programs);
  }

  // Seconds of the whole campaign, the runs before a --resume included.
  double elapsed() const { return elapsed_before_ + std::chrono::duration<double>(Clock::now() - start_).count(); }

  // The state a resumed campaign starts from (Journal): its summary already counts the cases below next_case.
  void go_on_from(const Journal& j) {
    const auto hits = std::move(summary_.known_divergence_hits);
    summary_ = j.summary;
    for (const auto& [signature, n] : hits) summary_.known_divergence_hits.emplace(signature, n);
    summary_.interrupted = false;
    summary_.jobs = c_.isolation == Isolation::Workers ? c_.jobs : 1;
    ++summary_.resumed;
    next_case_ = j.next_case;
    elapsed_before_ = j.elapsed;
    pending_ = j.pending;
    if (pending_) check_pending_is_its_case(*pending_);
    // What findings.jsonl holds is recorded, whatever the journal last said: a finding written just before a
    // kill is not written again.
    for (const auto& record : reports::read_jsonl(c_.out / "findings.jsonl").records) {
      reports::Finding f = reports::finding_from_json(record);
      ++recorded_[f.signature];
      if (!f.expected) unexpected_programs_.push_back(f.program);
      if (pending_ && pending_->case_index == f.case_index && pending_->signature == f.signature)
        pending_program_on_file_ = f.program;
    }
  }

  // The journal's pending finding holds the program its case runs (read_journal checked that it names the case
  // judged last): a program put there by hand would be recorded as this campaign's finding.
  void check_pending_is_its_case(const reports::Finding& f) const {
    const auto planned = corpus_.plan(c_.seed, f.case_index);
    const Program runs =
        planned ? planned->program : value_of(generate_case(c_.seed, f.case_index, c_.generator), f.case_index);
    if (f.program != runs || f.origin != (planned ? planned->origin : reports::CaseOrigin::Generated))
      throw reports::ReportError((c_.out / kJournalFile).string() + ": pending.program is not what case " +
                                 std::to_string(f.case_index) + " of seed " + std::to_string(c_.seed) +
                                 " runs: the journal was edited or damaged, so it cannot be resumed");
  }

  // The journal as of now: every case below `next_case` judged, `pending_` perhaps not yet in findings.jsonl.
  void checkpoint(std::uint64_t next_case) {
    corpus_log_.append_all(corpus_.take_log_lines());
    Journal j{c_, next_case, elapsed(), summary_, pending_};
    tally_.fold_into(j.summary);
    j.summary.seconds = j.elapsed;
    write_journal(c_.out, j);
    last_checkpoint_ = Clock::now();
  }

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

  // Files the next evaluation to finish: a case's among the ready ones, a shrinking candidate's for the shrink.
  void wait_for_one() {
    auto done = runner_.wait();
    PARITY_HARNESS_ASSERT(done.has_value(), "the campaign waits for an evaluation but none is under way");
    if (auto c = cases_in_flight_.find(done->ticket); c != cases_in_flight_.end()) {
      ready_.emplace(c->second, std::move(done->evaluation));
      cases_in_flight_.erase(c);
    } else {
      candidates_done_.emplace(done->ticket, std::move(done->evaluation));
    }
  }

  // Shrinking candidates, evaluated side by side by the runner (cases already started finish meanwhile).
  std::vector<Evaluation> evaluate_candidates(const std::vector<Program>& programs) {
    std::vector<Ticket> tickets;
    for (const auto& p : programs) tickets.push_back(runner_.submit(p));
    std::vector<Evaluation> out;
    for (Ticket t : tickets) {
      auto it = candidates_done_.find(t);
      for (; it == candidates_done_.end(); it = candidates_done_.find(t)) wait_for_one();
      out.push_back(std::move(it->second));
      candidates_done_.erase(it);
    }
    return out;
  }

  // Seconds of shrinking left to the campaign (CampaignConfig::shrink_share), and never past --seconds.
  double shrink_allowance() const {
    if (c_.shrink_share <= 0) return 0;
    const double base = c_.seconds ? *c_.seconds : elapsed();
    return std::min(std::max(kMinShrinkSeconds, c_.shrink_share * base) - summary_.shrink_seconds, seconds_left());
  }

  // What is left of --seconds (none given: no end).
  double seconds_left() const {
    return c_.seconds ? *c_.seconds - elapsed() : std::numeric_limits<double>::infinity();
  }

  // A case that completed and agreed is counted from its evaluation alone; the program of one that diverged or
  // died is generated here, as the worker did, for its signature, shrinking and finding.
  // `next_case`: the case judged after this one (where a resumed campaign would go on).
  void judge(std::uint64_t k, Evaluation ev, std::uint64_t next_case) {
    ++summary_.cases;
    std::optional<PlannedCase> planned;
    if (auto it = planned_.find(k); it != planned_.end()) {
      planned = std::move(it->second);
      planned_.erase(it);
      ++(planned->origin == reports::CaseOrigin::Mutated ? summary_.guidance.mutated : summary_.guidance.replayed);
    }
    const bool novel = count(ev);
    if (novel && corpus_.guided()) {
      corpus_.add(k, planned ? planned->program : value_of(generate_case(c_.seed, k, c_.generator), k),
                  ev.coverage);
      ++summary_.guidance.added;
    }
    if (!ev.divergence && ev.outcome == Evaluation::Outcome::Completed) return;
    // A planned program shrinks as the generator's do (generators/shrink.h), from the program itself.
    rc::Shrinkable<Program> generated = planned ? rc::shrinkable::shrinkRecur(planned->program, &generators::shrinks)
                                                : generate_case(c_.seed, k, c_.generator);
    const Program program = value_of(generated, k);
    origin_ = planned ? planned->origin : reports::CaseOrigin::Generated;
    if (ev.outcome == Evaluation::Outcome::Completed) {
      // A generated case was generated in the worker: the same program, or the generator is not deterministic.
      bool same = planned || ev.steps.size() == program.steps.size();
      for (std::size_t i = 0; !planned && same && i < program.steps.size(); ++i)
        same = ev.steps[i].op == program.steps[i].op;
      PARITY_HARNESS_ASSERT(same, "case " + std::to_string(k) + " generated in the worker is not the program " +
                                      "generated again in the campaign (the generator is not deterministic)");
    } else {
      // Its steps never reported (ev.steps is empty): they count as generated only.
      for (const auto& step : program.steps) ++tally_.ops[static_cast<std::size_t>(step.op)].generated;
    }
    if (ev.divergence) on_divergence(k, std::move(generated), program, std::move(ev), next_case);
  }

  // Counts the case; true when it reached a coverage key no case before it had.
  bool count(const Evaluation& ev) {
    reports::Coverage& coverage = summary_.coverage;
    for (const StepOutcome& s : ev.steps) {
      reports::OpCounts& c = tally_.ops[static_cast<std::size_t>(s.op)];
      ++c.generated;
      switch (s.oracle) {
        case judge::StepObs::Status::Ok: ++c.ok; break;
        case judge::StepObs::Status::Error:
          ++c.raised;
          ++tally_.raised[static_cast<std::size_t>(s.oracle_category)];
          break;
        case judge::StepObs::Status::Skipped: ++c.skipped; break;
      }
      if (s.impl == judge::StepObs::Status::Error && s.oracle == judge::StepObs::Status::Error &&
          s.impl_category == s.oracle_category)
        ++tally_.agreed[static_cast<std::size_t>(s.oracle_category)];
    }
    bool novel = false;
    auto add = [&novel](reports::Coverage::Counts& counts, const std::vector<std::string>& tags) {
      for (const auto& t : tags) novel |= ++counts[t] == 1;
    };
    add(coverage.layouts, ev.coverage.layouts);
    add(coverage.memory_formats, ev.coverage.memory_formats);
    add(coverage.dtypes, ev.coverage.dtypes);
    add(coverage.situations, ev.coverage.situations);
    add(coverage.situation_pairs, ev.coverage.situation_pairs);
    add(coverage.backward_through, ev.coverage.backward_through);
    add(coverage.role_pairs, ev.coverage.role_pairs);
    add(coverage.role_triples, ev.coverage.role_triples);
    add(coverage.op_operands, ev.coverage.op_operands);
    if (ev.outcome == Evaluation::Outcome::Crash) ++summary_.crashes;
    if (ev.outcome == Evaluation::Outcome::Timeout) ++summary_.timeouts;
    if (ev.outcome == Evaluation::Outcome::OutOfMemory) ++summary_.out_of_memory;
    return novel;
  }

  void on_divergence(std::uint64_t k, rc::Shrinkable<Program> generated, const Program& program, Evaluation ev,
                     std::uint64_t next_case) {
    const Divergence d = *ev.divergence;
    const judge::Signature sig = judge::signature(program, d);
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

    reports::Finding f = case_finding(summary_, c_.seed, k, sig);
    f.origin = origin_;
    f.expected = known != nullptr;
    f.known_reason = known ? known->reason : "";
    f.reproducible = confirm(program, sig);
    // Found, not yet shrunk: the journal has it, as it stands, before shrinking (which may take a minute) starts.
    f.program = program;
    f.original_program_size = program.steps.size();
    f.divergence = *ev.divergence;
    f.severity = f.divergence.severity;
    f.impl_trace = ev.impl;
    f.oracle_trace = ev.oracle;
    pending_ = f;
    checkpoint(next_case);
    finish_and_record(std::move(f), std::move(generated), program, std::move(ev));
    pending_.reset();
    checkpoint(next_case);
  }

  // `runs` more evaluations of a diverging program, counting those that diverge with its signature; none when
  // confirmation is off or the campaign was stopped meanwhile (an interrupted run says nothing).
  // The runs go a round of --jobs at a time, and none starts past --seconds (kSecondsOverrunTimeLimits): a timeout's
  // runs take a time limit each. Fewer runs than asked are recorded as run; none, as not confirmed.
  std::optional<reports::Finding::Reproducibility> confirm(const Program& program, const judge::Signature& sig) {
    reports::Finding::Reproducibility r{0, 0};
    while (r.runs < c_.confirm_runs && seconds_left() > 0) {
      const int round = std::min(summary_.jobs, c_.confirm_runs - r.runs);
      for (const Evaluation& e : evaluate_candidates(std::vector<Program>(static_cast<std::size_t>(round), program))) {
        if (e.outcome == Evaluation::Outcome::Interrupted) return std::nullopt;
        if (e.divergence && judge::signature(program, *e.divergence) == sig) ++r.diverged;
      }
      r.runs += round;
    }
    if (r.runs == 0) return std::nullopt;
    return r;
  }

  // Shrinks the found finding `f` (a flaky one stays as found: shrinking needs a divergence that repeats) and
  // appends it to findings.jsonl.
  void finish_and_record(reports::Finding f, rc::Shrinkable<Program> generated, const Program& program,
                         Evaluation ev) {
    if (f.reproducible && f.reproducible->flaky()) ++summary_.flaky_findings;
    else
      shrink_into_finding(f, std::move(generated), program, std::move(ev),
                          [this](const std::vector<Program>& ps) { return evaluate_candidates(ps); },
                          shrink_allowance(), stop_, summary_.jobs, summary_);
    writer_.append(to_json(f));
    on_recorded(f.case_index, f.signature, f.program, f.expected);
    if (observer_) observer_->on_finding(f);
  }

  void on_recorded(std::uint64_t k, const judge::Signature& sig, const Program& shrunk, bool expected) {
    if (!expected) unexpected_programs_.push_back(shrunk);
    summary_.groups[sig].offer(k, shrunk);
    ++recorded_[sig];
    ++summary_.recorded_findings;
  }

  // The divergence a killed campaign was recording when it stopped: written already (then only counted as
  // recorded), or shrunk again from its case and written. Its case is evaluated again first; if it no longer
  // diverges that way, the finding is written as the journal kept it, found but unshrunk.
  void record_pending() {
    reports::Finding f = std::move(*pending_);
    pending_.reset();
    if (pending_program_on_file_) {
      // recorded_ already counts it (go_on_from read findings.jsonl); the summary, taken before, does not.
      summary_.groups[f.signature].offer(f.case_index, *pending_program_on_file_);
      ++summary_.recorded_findings;
      if (f.reproducible && f.reproducible->flaky()) ++summary_.flaky_findings;
      return;
    }
    // Only a generated case is its seed's: a planned one is the program the finding kept, as it was found.
    rc::Shrinkable<Program> generated = f.origin == reports::CaseOrigin::Generated
                                            ? generate_case(c_.seed, f.case_index, c_.generator)
                                            : rc::shrinkable::shrinkRecur(f.program, &generators::shrinks);
    const Program program = value_of(generated, f.case_index);
    origin_ = f.origin;
    Evaluation ev = std::move(evaluate_candidates({program}).front());
    if (ev.divergence && judge::signature(program, *ev.divergence) == f.signature) {
      finish_and_record(std::move(f), std::move(generated), program, std::move(ev));
    } else {
      if (f.reproducible && f.reproducible->flaky()) ++summary_.flaky_findings;
      else ++summary_.unshrunk_findings;
      writer_.append(to_json(f));
      on_recorded(f.case_index, f.signature, f.program, f.expected);
      if (observer_) observer_->on_finding(f);
    }
  }

  const CampaignConfig& c_;
  const reports::KnownDivergences& known_;
  const std::atomic<bool>* stop_;
  CampaignObserver* observer_;
  reports::JsonlWriter writer_;
  Runner runner_;
  Corpus corpus_;
  reports::JsonlWriter corpus_log_;                    // kCorpusLogFile, for --resume
  std::map<std::uint64_t, PlannedCase> planned_;       // by case index: what the corpus planned, until judged
  reports::CaseOrigin origin_ = reports::CaseOrigin::Generated;  // of the divergence being recorded
  std::vector<Program> unexpected_programs_;           // recorded unexpected findings, shrunk: for the corpus folder
  reports::RunSummary summary_;
  StepTally tally_;
  std::map<judge::Signature, int> recorded_;
  std::string today_;
  Clock::time_point start_;
  // Resuming (go_on_from): where to go on, the time already spent, and the divergence being recorded.
  std::uint64_t next_case_ = static_cast<std::uint64_t>(c_.shard.index);
  double elapsed_before_ = 0;
  std::optional<reports::Finding> pending_;
  std::optional<Program> pending_program_on_file_;  // pending_'s program as findings.jsonl has it, if it does
  Clock::time_point last_checkpoint_;
  std::map<Ticket, std::uint64_t> cases_in_flight_;  // by ticket: case index
  std::map<std::uint64_t, Evaluation> ready_;        // by case index: finished, not judged
  std::map<Ticket, Evaluation> candidates_done_;     // shrinking candidates, finished
};

}  // namespace

void record_settings(const CampaignConfig& c, reports::RunSummary& s) {
  s.seed = c.seed;
  s.shard = c.shard;
  s.budget = {c.cases, c.seconds, c.max_findings};
  s.max_steps = c.generator.max_steps;
  s.device = c.generator.cuda ? "cuda" : "cpu";
  s.oracle = c.oracle;
  s.timeout_ms = static_cast<int>(c.timeout.count());
  s.isolation = c.isolation;
  s.jobs = c.isolation == Isolation::Workers ? c.jobs : 1;
  s.memory_limit_mb = c.memory_limit_bytes >> 20;
  s.guidance.share = c.guided_share;
}

void prepare_output(const std::filesystem::path& out, bool overwrite) {
  std::error_code ec;
  // findings.jsonl is appended to as findings come: a second campaign into one folder would mix with the first.
  // symlink_status: a link is there even when what it names is not, and writing through it would write outside
  // --out. --overwrite removes the link itself, never what it names.
  for (const char* name : {"run.json", "findings.jsonl", "report.html", kJournalFile, kCorpusLogFile}) {
    if (!std::filesystem::exists(std::filesystem::symlink_status(out / name, ec))) continue;
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
  return Campaign(config, known, stop, observer, nullptr).run();
}

CampaignResult resume_campaign(const Journal& journal, const reports::KnownDivergences& known,
                               const std::atomic<bool>* stop, CampaignObserver* observer) {
  return Campaign(journal.config, known, stop, observer, &journal).run();
}

std::vector<StaleKnownEntry> stale_known_entries(const reports::KnownDivergences& known,
                                                 const reports::RunSummary& summary, std::string_view today) {
  std::vector<StaleKnownEntry> out;
  for (const auto& k : known.entries()) {
    std::string why;
    if (today > k.expires) {
      why = "expired on " + k.expires + ": review it again";
    } else if (summary.oracle == reports::Oracle::LibTorch &&  // judged by impl, no entry is in force
               reports::KnownDivergences::applies(k, summary.libtorch_version, today)) {
      const auto hits = summary.known_divergence_hits.find(k.signature);
      if (hits == summary.known_divergence_hits.end() || hits->second == 0)
        why = "matched no finding in this run: remove it if LibTorch or impl changed, or run longer";
    }
    if (!why.empty()) out.push_back({&k, std::move(why)});
  }
  return out;
}

}  // namespace parity::engine
