// A campaign: generated programs, each evaluated in an isolated process (persistent workers, or a child forked per
// case), diverging ones shrunk and appended to findings.jsonl as soon as they are found, run.json written at the
// end. Cases run side by side but are judged in index order, so the findings, their shrinking and run.json (but
// its times) depend on the seed and budget, not on --jobs or the isolation. `parity fuzz` parses its flags into a
// CampaignConfig, calls run_campaign and prints; tests call it directly.
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/corpus.h"
#include "engine/shrink.h"
#include "generators/program_gen.h"
#include "reports/finding.h"
#include "reports/known_divergences.h"
#include "reports/run_summary.h"

namespace parity::engine {

inline constexpr int kMaxRecordedPerSignature = 3;  // findings written to findings.jsonl per signature
// Shrinking may always use this much of a campaign in all, however short the campaign, within its --seconds: a
// first finding is shrunk.
inline constexpr double kMinShrinkSeconds = 10;
// How far past --seconds a campaign may run, in case time limits (--timeout-ms), its output's writing aside. No
// case, confirming run or shrinking step starts past --seconds; the cases in flight then end within one time limit,
// and a confirming round or shrinking step in flight with them within another (they may wait for a worker). A
// divergence judged past --seconds is recorded as found: not confirmed, not shrunk.
inline constexpr int kSecondsOverrunTimeLimits = 2;

using reports::Isolation;

struct CampaignConfig {
  std::uint64_t seed = 0;
  std::optional<double> seconds;        // stop after this long
  std::optional<std::uint64_t> cases;   // stop after case indices 0..cases-1 (shared out among shards)
  std::optional<std::uint64_t> max_findings;  // stop once this many unexpected findings are recorded (-x: 1)
  std::filesystem::path out = "parity-out";  // findings.jsonl and run.json go here (see prepare_output)
  generators::GenConfig generator;
  // What judges impl: LibTorch, or impl on the CPU (a campaign on cuda only: reports/oracle.h).
  reports::Oracle oracle = reports::Oracle::LibTorch;
  // Protocol backends for either side (`--impl-cmd`, `--oracle-cmd`), and what is compared; the record of both
  // sides run.json carries (cli/backend_flags.h makes both).
  EvalSides sides;
  std::optional<reports::RunSummary::Backends> backends;
  std::chrono::milliseconds timeout{10000};  // of one case
  Isolation isolation = Isolation::Workers;
  int jobs = 1;                          // workers side by side (Fork: 1)
  std::size_t memory_limit_bytes = kDefaultMemoryLimitBytes;  // address space of one worker or child; 0: none
  // Shrinking stops for the rest of the campaign once it has used this share of the campaign's time (of
  // `seconds`, or of the time so far without it; never less than kMinShrinkSeconds), or `seconds` have passed:
  // later findings are recorded as found, and run.json counts them (unshrunk_findings). 0: nothing is shrunk.
  double shrink_share = 0.25;
  // A divergence about to be recorded is evaluated this many times more first (reports::Finding::reproducible);
  // one that does not repeat every time is flaky and recorded unshrunk. 0: not confirmed.
  int confirm_runs = 3;
  reports::ShardInfo shard;             // this process runs the cases k with k % total == index
  // The ledger file the campaign was given (--known), kept in the journal so that --resume loads the same one;
  // none: the source tree's default.
  std::optional<std::filesystem::path> known_file;
  // Coverage guidance (engine/corpus.h): the share of cases that run a mutant of a corpus entry once there is
  // one. 0: the recipes and random steps alone.
  double guided_share = kDefaultGuidedShare;
  // The corpus folder (`--corpus DIR`): its programs run first and are mutated; a complete campaign adds the
  // programs that reached new keys and its unexpected findings' shrunk programs to it.
  std::optional<std::filesystem::path> corpus_dir;
};

// What the campaign has done and what it was asked to do (either budget may be absent).
struct CampaignProgress {
  double elapsed = 0;  // seconds
  std::uint64_t cases = 0;
  std::uint64_t findings = 0;
  std::size_t groups = 0;
  std::optional<double> seconds_budget;
  std::optional<std::uint64_t> cases_budget;  // cases this shard will run
};

// What a campaign tells its caller while it runs (cli draws a progress line). Both default to nothing.
class CampaignObserver {
 public:
  virtual ~CampaignObserver() = default;
  // After every case, and once more (`final`) when the campaign ends, before run.json is written.
  virtual void on_progress(const CampaignProgress&, bool final) {
    (void)final;
  }
  // A finding recorded in findings.jsonl (shrunk; at most kMaxRecordedPerSignature per signature).
  virtual void on_finding(const reports::Finding&) {}
};

struct CampaignResult {
  reports::RunSummary summary;  // as written to run.json
  std::string today;            // the date (UTC) the known divergences were judged on
};

// The campaign's settings as its run.json records them (seed, shard, budget, limits, device, oracle, isolation,
// jobs, guided share): what a journal's summary must agree with its settings on.
void record_settings(const CampaignConfig& c, reports::RunSummary& s);

// Makes `out` ready for a campaign: the output of an earlier one (run.json, findings.jsonl, report.html,
// journal.json) is refused, or removed with `overwrite`, so that two campaigns' findings never mix. Throws
// reports::ReportError.
void prepare_output(const std::filesystem::path& out, bool overwrite);

struct Journal;

// Runs cases until a budget is spent or `stop` turns true (then summary.interrupted). Its journal
// (engine/journal.h) is kept in `out` while it runs and after a stop, and removed once run.json says it is
// complete. Throws EvaluationError when the machinery fails, reports::ReportError when the output cannot be
// written.
CampaignResult run_campaign(const CampaignConfig& config, const reports::KnownDivergences& known,
                            const std::atomic<bool>* stop = nullptr, CampaignObserver* observer = nullptr);

// Goes on with the campaign `journal` describes (its config, with journal.config.out its folder) from where the
// journal left it: the divergence it was recording is recorded unless findings.jsonl has it already, and the
// cases from journal.next_case on are run; the summary counts every case once. The caller checks
// resume_mismatches first. Throws as run_campaign.
CampaignResult resume_campaign(const Journal& journal, const reports::KnownDivergences& known,
                               const std::atomic<bool>* stop = nullptr, CampaignObserver* observer = nullptr);

// What --strict-known refuses in a finished campaign: entries expired on `today`, and entries in force that
// matched no finding (none is in force where impl judged impl: the ledger records differences from LibTorch).
// `why` says which, for a person.
struct StaleKnownEntry {
  const reports::KnownDivergence* entry;
  std::string why;
};
std::vector<StaleKnownEntry> stale_known_entries(const reports::KnownDivergences& known,
                                                 const reports::RunSummary& summary, std::string_view today);

}  // namespace parity::engine
