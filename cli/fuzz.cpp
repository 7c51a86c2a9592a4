// `parity fuzz`: a campaign of generated programs, each evaluated in a child process, diverging ones shrunk
// and appended to findings.jsonl as soon as they are found, a run summary at the end.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/render.h"
#include "engine/evaluate.h"
#include "generators/program_gen.h"
#include "impl/backend/planted_faults.h"
#include "oracle/torch_backend.h"
#include "program/coverage.h"
#include "program/json.h"
#include "program/splitmix.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "reports/known_divergences.h"
#include "reports/run_summary.h"

namespace parity::cli {

namespace {

using Clock = std::chrono::steady_clock;
using engine::EvalOptions;
using engine::Evaluation;
using engine::EvaluationError;
using engine::StepOutcome;
using engine::evaluate_isolated;
using program::Divergence;
using program::Program;

constexpr std::string_view kHelp = R"(usage: parity fuzz [options]

Runs generated programs on impl and on LibTorch, each case in a child process with a time limit, and
compares their traces. Diverging cases are shrunk and appended to DIR/findings.jsonl as they are found;
DIR/run.json summarises the campaign. Ctrl-C stops it cleanly.

options:
  --seconds N      stop after N seconds (default 60 when --cases is not given)
  --cases N        stop after case indices 0..N-1 (shared out among shards)
  --seed S         campaign seed (default: random, printed); the same seed gives the same programs
  --out DIR        output folder (default parity-out)
  --max-steps K    longest generated program (default 14)
  --timeout-ms T   time limit of one case (default 10000)
  --known FILE     known divergences (default: reports/known_divergences.json of the source tree, if present)
  --require-coverage
                   fail (exit 3) when some op, layout kind, memory format, error category or autograd
                   situation was never exercised; each is listed on stderr and in run.json (coverage.starved)
  --overwrite      replace the campaign output already in DIR (run.json, findings.jsonl, report.html); without
                   it such a folder is refused, so that two campaigns' findings never mix
  --strict-known   fail (exit 4) when a known-divergence entry has expired, or is in force for this LibTorch
                   but matched no finding of the run (run.json known_divergence_hits): the ledger must only
                   hold what still happens. Meant for long campaigns; a short one may miss a rare entry

Sharding follows GoogleTest: GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX (or Bazel's TEST_TOTAL_SHARDS/
TEST_SHARD_INDEX) make this process take only the cases k with k % total == index.

Coverage (run.json "coverage", and the "coverage:" line at the end) is judged on LibTorch's traces and
counted per process: with shards, each shard must reach everything for --require-coverage to pass.

exit status:
  0  no unexpected findings (and, with --require-coverage, nothing starved)
  1  unexpected findings (whatever the coverage)
  2  bad usage or setup
  3  --require-coverage: no unexpected findings, but something was never exercised
  4  --strict-known: no unexpected findings, everything exercised, but the ledger has a stale or expired entry
)";

constexpr int kExitOk = 0;
constexpr int kExitUnexpectedFindings = 1;
constexpr int kExitStarved = 3;
constexpr int kExitStaleLedger = 4;
// The end-of-run line names at most this many starved items; run.json has them all.
constexpr std::size_t kStarvedShown = 6;

constexpr int kMaxRecordedPerSignature = 3;
constexpr int kMaxShrinkEvaluations = 200;
// Candidates that hang cost a full time limit each: a shrink also stops after this long, keeping its best.
constexpr double kMaxShrinkSeconds = 60;

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

// Case k's generator seed and size depend on the campaign seed and k only, so shards and reruns agree.
using program::splitmix64;

std::uint64_t case_seed(std::uint64_t seed, std::uint64_t k) { return splitmix64(seed ^ splitmix64(k)); }
int case_size(std::uint64_t k) { return static_cast<int>(k % 101); }

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

reports::ShardInfo shard_from_env() {
  const char* names[][2] = {{"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX"}, {"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX"}};
  reports::ShardInfo shard;
  for (auto& [total_name, index_name] : names) {
    auto total = env(total_name), index = env(index_name);
    if (!total && !index) continue;
    if (!total || !index)
      throw UsageError(std::string(total ? index_name : total_name) + " must be set together with " +
                       (total ? total_name : index_name));
    std::uint64_t t = parse_uint64(*total, total_name), i = parse_uint64(*index, index_name);
    if (t < 1 || t > 1000000) throw UsageError(std::string(total_name) + " must be between 1 and 1000000");
    if (i >= t)
      throw UsageError(std::string(index_name) + "=" + *index + " must be below " + total_name + "=" + *total);
    shard.total = static_cast<int>(t);
    shard.index = static_cast<int>(i);
    break;
  }
  // Bazel asks test runners that shard to say so by touching this file.
  if (auto status = env("TEST_SHARD_STATUS_FILE")) std::ofstream(*status, std::ios::app);
  return shard;
}

// Once a second on a terminal (rewriting one line), every five seconds as plain lines otherwise.
struct Options {
  std::optional<double> seconds;
  std::optional<std::uint64_t> cases;
  std::uint64_t seed = 0;
  std::filesystem::path out = "parity-out";
  generators::GenConfig config;
  std::chrono::milliseconds timeout{10000};
  std::optional<std::filesystem::path> known;
  bool require_coverage = false;
  bool strict_known = false;
  bool overwrite = false;
};

Options parse_options(const std::vector<std::string>& argv) {
  Args args("parity fuzz", argv,
            {{"--seconds"}, {"--cases"}, {"--seed"}, {"--out"}, {"--max-steps"}, {"--timeout-ms"}, {"--known"},
             {"--require-coverage", false}, {"--strict-known", false}, {"--overwrite", false}});
  if (!args.positional().empty())
    throw UsageError("unexpected argument \"" + args.positional()[0] + "\" (see `parity fuzz --help`)");
  Options o;
  o.seconds = args.number("--seconds", 0.0, 1e9);
  o.cases = args.uint64("--cases", 0, std::uint64_t{1} << 62);
  if (!o.seconds && !o.cases) o.seconds = 60.0;
  if (auto s = args.uint64("--seed", 0, UINT64_MAX)) o.seed = *s;
  else o.seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  if (auto d = args.value("--out")) {
    if (d->empty()) throw UsageError("--out needs a folder");
    o.out = *d;
  }
  if (auto k = args.uint64("--max-steps", 1, program::kMaxSteps)) o.config.max_steps = static_cast<int>(*k);
  if (auto t = args.uint64("--timeout-ms", 1, 24ull * 3600 * 1000)) o.timeout = std::chrono::milliseconds(*t);
  if (auto k = args.value("--known")) o.known = *k;
  o.require_coverage = args.has("--require-coverage");
  o.strict_known = args.has("--strict-known");
  o.overwrite = args.has("--overwrite");
  return o;
}

// An explicit --known file must exist; the source tree's file is optional (a binary copied elsewhere).
reports::KnownDivergences load_known(const Options& o) {
  if (o.known) return reports::KnownDivergences::load(*o.known);
  auto path = reports::default_known_divergences_path();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return reports::KnownDivergences::load(path);
}

class Campaign {
 public:
  Campaign(Options o, reports::ShardInfo shard, reports::KnownDivergences known)
      : o_(std::move(o)), known_(std::move(known)), writer_(o_.out / "findings.jsonl") {
    summary_.libtorch_version = oracle::torch_version();
    summary_.parity_commit = std::string(reports::parity_commit());
    summary_.generator_version = generators::kGeneratorVersion;
    summary_.planted_faults = impl::planted_fault_texts();
    summary_.seed = o_.seed;
    summary_.shard = shard;
    summary_.max_steps = o_.config.max_steps;
    summary_.timeout_ms = static_cast<int>(o_.timeout.count());
    summary_.coverage = reports::Coverage::zeroed();
    today_ = reports::today_utc();
    // Every entry in force starts at 0, so an entry nothing matched is visible in run.json.
    for (const auto& k : known_.entries())
      if (reports::KnownDivergences::applies(k, summary_.libtorch_version, today_))
        summary_.known_divergence_hits[k.signature] = 0;
    for (const auto* k : known_.expired(today_))
      progress_.message("parity: warning: known divergence \"" + k->signature + "\" expired on " + k->expires +
                        "; it no longer matches: review it");
  }

  int run() {
    std::fprintf(stderr, "parity fuzz: seed %llu, shard %d/%d, output %s\n", static_cast<unsigned long long>(o_.seed),
                 summary_.shard.index, summary_.shard.total, o_.out.string().c_str());
    start_ = Clock::now();
    for (std::uint64_t k = static_cast<std::uint64_t>(summary_.shard.index);;
         k += static_cast<std::uint64_t>(summary_.shard.total)) {
      if (g_stop.load()) break;
      if (o_.cases && k >= *o_.cases) break;
      if (o_.seconds && elapsed() >= *o_.seconds) break;
      if (!run_case(k)) break;
      progress_.tick(progress_state());
    }
    summary_.interrupted = g_stop.load();
    summary_.seconds = elapsed();
    summary_.cases_per_second = summary_.seconds > 0 ? static_cast<double>(summary_.cases) / summary_.seconds : 0;
    progress_.tick(progress_state(), true);
    progress_.finish();
    reports::write_run_summary(o_.out / "run.json", summary_);
    print_final();
    // Starved items and stale ledger entries are listed even when findings decide the exit status: all need fixing.
    const bool starved = o_.require_coverage && !check_coverage();
    const bool stale = o_.strict_known && !check_known();
    if (summary_.unexpected_findings > 0) return kExitUnexpectedFindings;
    if (starved) return kExitStarved;
    return stale ? kExitStaleLedger : kExitOk;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  ProgressState progress_state() const {
    ProgressState p{elapsed(), summary_.cases, summary_.findings, summary_.groups.size(), o_.seconds, {}};
    // This shard runs the indices k < cases with k % total == index.
    if (o_.cases) {
      const auto total = static_cast<std::uint64_t>(summary_.shard.total), index = static_cast<std::uint64_t>(summary_.shard.index);
      p.cases_budget = *o_.cases > index ? (*o_.cases - index + total - 1) / total : 0;
    }
    return p;
  }

  EvalOptions eval_options(bool want_traces = false) const { return {o_.timeout, want_traces, &g_stop}; }

  rc::Shrinkable<Program> generate(std::uint64_t k) const {
    try {
      return generators::generate(case_seed(o_.seed, k), case_size(k), o_.config);
    } catch (const std::exception& e) {
      throw EvaluationError("the generator failed for case " + std::to_string(k) + " (seed " +
                            std::to_string(o_.seed) + "): " + e.what());
    }
  }

  static Program value_of(const rc::Shrinkable<Program>& s, std::uint64_t k) {
    try {
      return s.value();
    } catch (const std::exception& e) {
      throw EvaluationError("the generator failed for case " + std::to_string(k) + ": " + e.what());
    }
  }

  // Returns false when the campaign was interrupted during the case.
  bool run_case(std::uint64_t k) {
    rc::Shrinkable<Program> shrinkable = generate(k);
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
    f.seed = o_.seed;
    f.case_index = k;
    f.case_seed = case_seed(o_.seed, k);
    f.size = case_size(k);
    f.signature = sig;
    f.expected = known != nullptr;
    f.known_reason = known ? known->reason : "";
    f.original_program_size = program.steps.size();
    f.program = program;
    // A hang is not shrunk: every candidate could cost a full time limit.
    if (ev.outcome != Evaluation::Outcome::Timeout) shrink(shrinkable, sig, f, ev);
    f.divergence = *ev.divergence;
    f.severity = f.divergence.severity;
    f.impl_trace = std::move(ev.impl);
    f.oracle_trace = std::move(ev.oracle);
    writer_.append(to_json(f));
    group.offer(k, f.program);
    ++recorded_[sig];
    ++summary_.recorded_findings;
    progress_.message("finding: " + describe_divergence(f.program, f.divergence) + " [case " + std::to_string(k) +
                      ", " + std::to_string(f.original_program_size) + " -> " +
                      std::to_string(f.program.steps.size()) + " steps" + (f.expected ? ", expected" : "") + "]");
  }

  // Greedy descent through the generator's shrinks: take the first candidate that still diverges with the same
  // signature, start again from it, until no candidate does (a local minimum) or the budget is spent.
  void shrink(const rc::Shrinkable<Program>& start, const program::Signature& sig, reports::Finding& f, Evaluation& ev) {
    rc::Shrinkable<Program> current = start;
    int evaluations = 0;
    const double deadline = elapsed() + kMaxShrinkSeconds;
    auto budget_left = [&] { return evaluations < kMaxShrinkEvaluations && elapsed() < deadline && !g_stop.load(); };
    bool improved = true;
    while (improved && budget_left()) {
      improved = false;
      auto shrinks = current.shrinks();
      while (budget_left()) {
        auto candidate = shrinks.next();
        if (!candidate) break;
        Program p;
        try {
          p = (*candidate).value();
        } catch (const std::exception&) {
          continue;  // a shrink the generator cannot build is simply not a candidate
        }
        ++evaluations;
        Evaluation e = evaluate_isolated(p, eval_options());
        if (e.outcome == Evaluation::Outcome::Interrupted) break;
        if (!e.divergence || program::signature(p, *e.divergence) != sig) continue;
        current = std::move(*candidate);
        f.program = std::move(p);
        ev = std::move(e);
        improved = true;
        break;
      }
    }
    f.shrink_evaluations = evaluations;
  }

  void print_final() {
    std::printf("parity fuzz: %llu cases in %.1f s (%.1f/s), %llu findings in %zu groups (%llu unexpected, %llu "
                "expected), %llu crashes, %llu timeouts; seed %llu%s\n",
                static_cast<unsigned long long>(summary_.cases), summary_.seconds, summary_.cases_per_second,
                static_cast<unsigned long long>(summary_.findings), summary_.groups.size(),
                static_cast<unsigned long long>(summary_.unexpected_findings),
                static_cast<unsigned long long>(summary_.expected_findings),
                static_cast<unsigned long long>(summary_.crashes), static_cast<unsigned long long>(summary_.timeouts),
                static_cast<unsigned long long>(o_.seed), summary_.interrupted ? " (interrupted)" : "");
    for (const auto& [sig, g] : summary_.groups) {
      std::string where = "first case " + std::to_string(g.first_case);
      if (g.smallest)
        where += ", smallest " + std::to_string(g.smallest->program.steps.size()) + " steps (case " +
                 std::to_string(g.smallest->case_index) + ")";
      std::string note = g.expected ? " (expected: " + one_line(g.known_reason, 120) + ")" : "";
      std::printf("  %6llu  %s  [%s]%s\n", static_cast<unsigned long long>(g.count), sig.to_string().c_str(), where.c_str(),
                  note.c_str());
    }
    std::printf("%s\n", coverage_line(summary_.coverage).c_str());
    std::printf("summary: %s, findings: %s\n", (o_.out / "run.json").string().c_str(),
                (o_.out / "findings.jsonl").string().c_str());
    std::fflush(stdout);
  }

  // "coverage: 20/36 situations, 57/57 ops, ...; starved: a, b, ... (+N more in run.json)", one line.
  static std::string coverage_line(const reports::Coverage& c) {
    // Situations first, in the counts and in the starved list: they are what the line is read for.
    std::vector<std::string> starved = reports::starved(c);
    std::stable_partition(starved.begin(), starved.end(), [](const auto& s) { return s.starts_with("situations."); });
    auto dims = program::coverage_dimensions();
    std::stable_partition(dims.begin(), dims.end(), [](const auto& d) { return d.name == "situations"; });
    std::string line = "coverage:";
    for (const auto& d : dims) {
      const std::string prefix = std::string(d.name) + ".";
      auto missing = std::count_if(starved.begin(), starved.end(), [&](const auto& s) { return s.starts_with(prefix); });
      std::string name(d.name);
      std::replace(name.begin(), name.end(), '_', ' ');
      line += (line.back() == ':' ? " " : ", ") + std::to_string(d.keys.size() - static_cast<std::size_t>(missing)) +
              "/" + std::to_string(d.keys.size()) + " " + name;
    }
    if (starved.empty()) return line + "; nothing starved";
    line += "; starved:";
    for (std::size_t i = 0; i < starved.size() && i < kStarvedShown; ++i) line += (i ? ", " : " ") + starved[i];
    if (starved.size() > kStarvedShown)
      line += " (+" + std::to_string(starved.size() - kStarvedShown) + " more in run.json)";
    return line;
  }

  // --require-coverage: false, with every starved item on stderr, when something was never exercised.
  bool check_known() const {
    bool ok = true;
    for (const auto& k : known_.entries()) {
      std::string why;
      if (today_ > k.expires) why = "expired on " + k.expires + ": review it again";
      else if (reports::KnownDivergences::applies(k, summary_.libtorch_version, today_) &&
               summary_.known_divergence_hits.at(k.signature) == 0)
        why = "matched no finding in this run: remove it if LibTorch or impl changed, or run longer";
      if (why.empty()) continue;
      std::fprintf(stderr, "parity fuzz: --strict-known: known divergence \"%s\" %s\n", k.signature.c_str(), why.c_str());
      ok = false;
    }
    std::fflush(stderr);
    return ok;
  }

  bool check_coverage() const {
    const std::vector<std::string> starved = reports::starved(summary_.coverage);
    if (starved.empty()) return true;
    std::fprintf(stderr,
                 "parity fuzz: --require-coverage: %zu items were never exercised (the generator does not produce "
                 "them often enough: extend it, or give the campaign more cases):\n",
                 starved.size());
    for (const auto& s : starved) std::fprintf(stderr, "  starved: %s\n", s.c_str());
    std::fflush(stderr);
    return false;
  }

  Options o_;
  reports::KnownDivergences known_;
  reports::JsonlWriter writer_;
  reports::RunSummary summary_;
  std::map<program::Signature, int> recorded_;
  std::string today_;
  ProgressLine progress_;
  Clock::time_point start_;
};

}  // namespace

int fuzz_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Options o = parse_options(argv);
  reports::ShardInfo shard = shard_from_env();
  reports::KnownDivergences known = load_known(o);
  std::error_code ec;
  // findings.jsonl is appended to as findings come: a second campaign into one folder would mix with the first.
  for (const char* name : {"run.json", "findings.jsonl", "report.html"}) {
    if (!std::filesystem::exists(o.out / name, ec)) continue;
    if (!o.overwrite)
      throw UsageError(o.out.string() + " already holds a campaign's output (" + name +
                       "): give another --out, or --overwrite to replace it");
    if (!std::filesystem::remove(o.out / name, ec) || ec)
      throw reports::ReportError((o.out / name).string() + ": cannot remove it" + (ec ? ": " + ec.message() : ""));
  }
  std::filesystem::create_directories(o.out, ec);
  if (ec || !std::filesystem::is_directory(o.out))
    throw reports::ReportError(o.out.string() + ": cannot create the output folder" +
                               (ec ? ": " + ec.message() : std::string()));
  Campaign campaign(std::move(o), shard, std::move(known));

  // No SA_RESTART: a blocked poll or read returns, and the loop sees the flag at once.
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  int rc = campaign.run();
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return rc;
}

}  // namespace parity::cli
