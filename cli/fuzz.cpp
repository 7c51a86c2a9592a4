// `parity fuzz`: parses the campaign's flags and environment (sharding), runs it (engine/campaign.h) and prints
// its progress, its findings as they come and a summary at the end.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>

#include "cli/args.h"
#include "cli/backend_flags.h"
#include "cli/campaign_printer.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/input.h"
#include "cli/memory_limit.h"
#include "cli/oracle_flag.h"
#include "cli/render.h"
#include "cli/setting_flag.h"
#include "engine/campaign.h"
#include "engine/device_probe.h"
#include "engine/journal.h"
#include "engine/worker_pool.h"
#include "files/folder_lock.h"
#include "files/output_file.h"
#include "judge/coverage.h"
#include "program/json.h"
#include "reports/build_info.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "reports/junit.h"
#include "reports/known_divergences.h"
#include "reports/run_summary.h"

namespace parity::cli {

namespace {

const std::string kHelp = std::string(R"(usage: parity fuzz [options]

Runs generated programs on impl and on LibTorch in isolated worker processes, with a time and a memory limit
per case, and compares their traces. A worker that crashes, hangs or runs out of memory ends only its case
(a crash, timeout or out_of_memory finding) and is replaced. Diverging cases are shrunk and appended to
DIR/findings.jsonl as they are found; DIR/run.json summarises the campaign. SIGINT (Ctrl-C), SIGTERM, SIGHUP
and SIGUSR1 stop it cleanly: run.json is written, marked interrupted.

options:
  --seconds N      stop after N seconds (default 60 when --cases is not given): no case, confirming run or
                   shrinking step starts after them, and what is in flight ends within two --timeout-ms
  --cases N        stop after case indices 0..N-1 (shared out among shards)
  --seed S         campaign seed (default: random, printed); the same seed gives the same programs
  --out DIR        output folder (default parity-out)
  --max-steps K    longest generated program (default 14)
  --device D       cpu (default: every tensor on the CPU) or cuda: factories and to() put tensors on cuda and
                   cpu alike, and both backends run them there; refused (exit 7) unless impl and LibTorch
                   both see a CUDA device (a CUDA build of each: ../shared/device/README.md)
  --oracle O       what judges impl: libtorch (default), or impl-cpu (with --device cuda only): impl itself,
                   its cuda tensors in host memory and its kernels run by the CPU, under the same device rules,
                   so that impl's device kernels, launches and transfers are checked against its CPU executor.
                   Needs a CUDA device for impl only; the known-divergences ledger (impl against LibTorch)
                   is not in force
  --timeout-ms T   time limit of one case (default 10000)
  --jobs N         worker processes side by side (default: the cores this process may use). Cases are
                   judged in index order, so the findings do not depend on N
  --isolation M    workers (default): persistent workers, many cases each; fork: a child forked for every
                   case and shrinking candidate, one at a time (slow; the reference the workers must match)
  --memory-mb M    address-space limit of one worker in MiB (default 4096; 0: none); a case that exceeds it is
                   an out_of_memory finding. Not applied with --device cuda (the CUDA driver reserves address
                   space for the device's memory) nor in an AddressSanitizer build (its shadow memory takes
                   terabytes of address space); either says so on stderr when the flag is given
  --shrink-share F share of the campaign's time (--seconds, or the time so far) that shrinking may take in all,
                   never less than 10 s (default 0.25; 0: no shrinking); findings beyond it are recorded
                   unshrunk
  --max-findings N stop once N unexpected findings are recorded (the run is complete: run.json's
                   budget.max_findings says why it ended early)
  -x, --exitfirst  stop at the first unexpected finding (--max-findings 1)
  --guided-share F share of cases that run a mutant of a corpus program once the corpus has one (default
                   0.08; 0: the generator's programs alone). The corpus holds the programs that reached a
                   coverage key first; a mutation adds one situation on another tensor or role (a view, a
                   sibling, a copy or .grad as an operand, an alias of the destination as a source, a 0-dim
                   operand of another dtype, retain_grad on a view a step reads, a write into what a step or a
                   backward reads, a scalar at its dtype's edge, more steps). Findings say which cases were
                   mutants (origin)
  --corpus DIR     keep the corpus across campaigns: DIR's programs (*.json, as `parity run` reads) run first
                   as they are, then are mutated; a complete campaign adds its new corpus programs and its
                   unexpected findings' shrunk programs to DIR
  --known FILE     known divergences (default: reports/known_divergences.json of the source tree, if present)
  --require-coverage
                   fail (exit 3) when some op, layout kind, memory format, error category or autograd
                   situation was never exercised; each is listed on stderr and in run.json (coverage.starved)
  --confirm N      evaluate a divergence N more times before recording it (default 3; 0: no confirmation): one
                   that does not diverge the same way every time is flaky, labelled so in its finding
                   (reproducible: diverged/runs) and recorded unshrunk
  --overwrite      replace the campaign output already in DIR (run.json, findings.jsonl, report.html,
                   journal.json; a symbolic link there is removed, never what it names); without it such a
                   folder is refused, so that two campaigns' findings never mix
  --resume DIR     go on with the campaign in DIR, stopped or killed, from its journal (DIR/journal.json): with
                   its settings, from the first case it had not judged, recording the finding it was shrinking
                   unless findings.jsonl has it. Only --jobs, --require-coverage, --strict-known and --junit may
                   be given with it. The journal is removed when the campaign completes
  --junit FILE     also write the result as JUnit XML for CI: a test case for the campaign and one per group
                   of findings (failed when unexpected, with its smallest finding's first difference and
                   program; skipped when the ledger expects it)
  --strict-known   fail (exit 4) when a known-divergence entry has expired, or is in force for this LibTorch
                   but matched no finding of the run (run.json known_divergence_hits): the ledger must only
                   hold what still happens. Meant for long campaigns; a short one may miss a rare entry
)") + backend_flags_help(true) + R"(
DIR/journal.json is the campaign's state, rewritten (atomically) every second and around each finding, so a
campaign killed at any moment loses no finding: --resume finishes it, and run.json then counts every case once.

Sharding follows GoogleTest: GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX (or Bazel's TEST_TOTAL_SHARDS/
TEST_SHARD_INDEX) make this process take only the cases k with k % total == index.

Coverage (run.json "coverage", and the "coverage:" line at the end) is judged on LibTorch's traces and
counted per process: with shards, each shard must reach everything for --require-coverage to pass.

exit status (where several apply, the first of 1, 5, 6, 3, 4 is given):
  0  the budget was spent, with no unexpected findings (and nothing starved or stale where asked)
  1  unexpected findings, however the run ended: a finding stands
  2  bad usage or setup
  3  --require-coverage: no unexpected findings, but something was never exercised
  4  --strict-known: no unexpected findings, everything exercised, but the ledger has a stale or expired entry
  5  interrupted: a signal (SIGINT, SIGTERM, SIGHUP, SIGUSR1) stopped the run before its budget was spent;
     run.json is written and marked interrupted, coverage and the ledger are not judged
  6  no case ran: the budget gave this process none (--cases 0, --seconds 0, or a shard with no case index
     below --cases)
  7  --device cuda on a machine or build where impl or LibTorch (unless --oracle impl-cpu) has no CUDA device:
     nothing ran
)";

// The end-of-run line names at most this many starved items; run.json has them all.
constexpr std::size_t kStarvedShown = 6;

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
    if (t < 1 || t > static_cast<std::uint64_t>(reports::kMaxShards))
      throw UsageError(std::string(total_name) + " must be between 1 and " + std::to_string(reports::kMaxShards));
    if (i >= t)
      throw UsageError(std::string(index_name) + "=" + *index + " must be below " + total_name + "=" + *total);
    shard.total = static_cast<int>(t);
    shard.index = static_cast<int>(i);
    break;
  }
  // Bazel asks test runners that shard to say so by touching this file.
  // Created if absent, never followed through a symbolic link (files/output_file.h), as every output.
  if (auto status = env("TEST_SHARD_STATUS_FILE")) files::AppendFile touched(*status);
  return shard;
}

struct Options {
  engine::CampaignConfig campaign;  // all but the shard, which the environment gives
  bool require_coverage = false;
  bool strict_known = false;
  bool overwrite = false;
  std::optional<std::filesystem::path> resume;  // the folder of the campaign to go on with
  std::optional<std::filesystem::path> junit;   // --junit: the groups as JUnit XML
};

// The flags --resume may come with: the others would change the campaign, whose settings its journal holds.
constexpr std::string_view kResumeAllows[] = {"--resume", "--jobs", "--require-coverage", "--strict-known", "--junit"};

Options parse_options(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> kFlags = {
      {"--seconds"}, {"--cases"}, {"--seed"}, {"--out"}, {"--max-steps"}, {"--timeout-ms"}, {"--known"},
      {"--jobs"}, {"--isolation"}, {"--memory-mb"}, {"--shrink-share"}, {"--require-coverage", false},
      {"--strict-known", false}, {"--overwrite", false}, {"--confirm"}, {"--resume"}, {"--device"}, {"--oracle"},
      {"--impl-cmd"}, {"--oracle-cmd"}, {"--backend-start-ms"}, {"--ops"}, {"--skip-ops"}, {"--dtypes"},
      {"--max-findings"}, {"--exitfirst", false, "-x"}, {"--guided-share"}, {"--corpus"}, {"--junit"}};
  Args args("parity fuzz", argv, kFlags);
  if (!args.positional().empty())
    throw UsageError("unexpected argument \"" + args.positional()[0] + "\" (see `parity fuzz --help`)");
  Options o;
  if (auto d = args.value("--resume")) {
    if (d->empty()) throw UsageError("--resume needs the folder of the campaign to go on with");
    o.resume = *d;
    for (const FlagSpec& f : kFlags)
      if (args.has(f.name) &&
          std::find(std::begin(kResumeAllows), std::end(kResumeAllows), f.name) == std::end(kResumeAllows))
        throw UsageError(f.name + " cannot be given with --resume: the campaign goes on with the settings its "
                         "journal holds (only --jobs, --require-coverage, --strict-known and --junit may change)");
  }
  o.campaign.seconds = number_in(args, engine::kSecondsRange);
  o.campaign.cases = uint64_in(args, engine::kCasesRange);
  if (!o.campaign.seconds && !o.campaign.cases) o.campaign.seconds = 60.0;
  o.campaign.max_findings = uint64_in(args, engine::kMaxFindingsRange);
  if (args.has("--exitfirst")) {
    if (o.campaign.max_findings && *o.campaign.max_findings != 1)
      throw UsageError("-x stops at the first unexpected finding: it cannot be given with --max-findings " +
                       std::to_string(*o.campaign.max_findings));
    o.campaign.max_findings = 1;
  }
  if (auto s = args.uint64("--seed", 0, UINT64_MAX)) o.campaign.seed = *s;
  else o.campaign.seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  if (auto d = args.value("--out")) {
    if (d->empty()) throw UsageError("--out needs a folder");
    o.campaign.out = *d;
  }
  if (auto d = args.value("--device")) {
    if (*d != "cpu" && *d != "cuda") throw UsageError("--device must be cpu or cuda, not \"" + d->substr(0, 40) + "\"");
    o.campaign.generator.cuda = *d == "cuda";
  }
  if (auto oracle = oracle_flag(args)) o.campaign.oracle = *oracle;
  require_cuda_for(o.campaign.oracle, o.campaign.generator.cuda, "parity fuzz", "it needs --device cuda");
  if (auto k = uint64_in(args, engine::kMaxStepsRange)) o.campaign.generator.max_steps = static_cast<int>(*k);
  if (auto t = uint64_in(args, engine::kTimeoutMsRange)) o.campaign.timeout = std::chrono::milliseconds(*t);
  if (auto k = args.value("--known")) o.campaign.known_file = *k;
  if (auto m = args.value("--isolation")) {
    auto isolation = reports::parse_isolation(*m);
    if (!isolation) throw UsageError("--isolation must be workers or fork, not \"" + m->substr(0, 40) + "\"");
    o.campaign.isolation = *isolation;
  }
  const auto jobs = uint64_in(args, engine::kJobsRange);
  if (o.campaign.isolation == engine::Isolation::Fork) {
    if (jobs && *jobs != 1) throw UsageError("--isolation fork runs one case at a time: --jobs must be 1");
    o.campaign.jobs = 1;
  } else {
    o.campaign.jobs = jobs ? static_cast<int>(*jobs) : engine::usable_cores();
  }
  o.campaign.memory_limit_bytes = memory_limit_bytes(args, "parity fuzz", o.campaign.generator.cuda);
  if (auto f = number_in(args, engine::kShrinkShareRange)) o.campaign.shrink_share = *f;
  if (auto n = uint64_in(args, engine::kConfirmRunsRange)) o.campaign.confirm_runs = static_cast<int>(*n);
  if (auto f = number_in(args, engine::kGuidedShareRange)) o.campaign.guided_share = *f;
  if (auto d = args.value("--corpus")) {
    if (d->empty()) throw UsageError("--corpus needs a folder");
    std::error_code ec;
    if (std::filesystem::weakly_canonical(*d, ec) == std::filesystem::weakly_canonical(o.campaign.out, ec))
      throw UsageError("--corpus must be another folder than --out: the corpus folder holds programs only");
    o.campaign.corpus_dir = *d;
  }
  o.require_coverage = args.has("--require-coverage");
  o.strict_known = args.has("--strict-known");
  o.overwrite = args.has("--overwrite");
  if (auto j = args.value("--junit")) {
    if (j->empty()) throw UsageError("--junit needs a file to write the report to");
    o.junit = *j;
  }
  if (!o.resume) {
    BackendChoice b = choose_backends(args, "parity fuzz", true, in_process_oracle(o.campaign.oracle));
    b.require_cuda(o.campaign.generator.cuda, "parity fuzz --device cuda");
    o.campaign.sides = b.sides;
    o.campaign.generator.selection = b.selection;
    o.campaign.backends = b.record;
  }
  return o;
}


// "coverage: 20/36 situations, 57/57 ops, ...; starved: a, b, ... (+N more in run.json)", one line.
std::string coverage_line(const reports::Coverage& c) {
  // Situations first, in the counts and in the starved list: they are what the line is read for.
  std::vector<std::string> starved = reports::starved(c);
  std::stable_partition(starved.begin(), starved.end(), [](const auto& s) { return s.starts_with("situations."); });
  auto dims = judge::coverage_dimensions();
  std::stable_partition(dims.begin(), dims.end(), [](const auto& d) { return d.name == "situations"; });
  std::string line = "coverage:";
  for (const auto& d : dims) {
    if (d.keys.empty()) continue;  // no goal: its table in run.json and the page says what was met
    const std::string prefix = std::string(d.name) + ".";
    auto missing = std::count_if(starved.begin(), starved.end(), [&](const auto& s) { return s.starts_with(prefix); });
    // Keys the selection left out of reach are no goals: neither reached nor counted.
    const std::size_t goals = static_cast<std::size_t>(std::count_if(
        d.keys.begin(), d.keys.end(), [&](const auto& k) { return !c.not_goals.contains(prefix + std::string(k)); }));
    std::string name(d.name);
    std::replace(name.begin(), name.end(), '_', ' ');
    line += (line.back() == ':' ? " " : ", ") + std::to_string(goals - static_cast<std::size_t>(missing)) + "/" +
            std::to_string(goals) + " " + name;
  }
  if (starved.empty()) return line + "; nothing starved";
  line += "; starved:";
  for (std::size_t i = 0; i < starved.size() && i < kStarvedShown; ++i) line += (i ? ", " : " ") + starved[i];
  if (starved.size() > kStarvedShown)
    line += " (+" + std::to_string(starved.size() - kStarvedShown) + " more in run.json)";
  return line;
}

void print_final(const engine::CampaignConfig& c, const reports::RunSummary& s) {
  std::printf("parity fuzz: %llu cases in %.1f s (%.1f/s), %llu findings in %zu groups (%llu unexpected, %llu "
              "expected; %llu recorded in findings.jsonl, at most %d per group), %llu crashes, %llu timeouts, %llu "
              "out of memory; seed %llu%s\n",
              static_cast<unsigned long long>(s.cases), s.seconds, s.cases_per_second,
              static_cast<unsigned long long>(s.findings), s.groups.size(),
              static_cast<unsigned long long>(s.unexpected_findings),
              static_cast<unsigned long long>(s.expected_findings),
              static_cast<unsigned long long>(s.recorded_findings), engine::kMaxRecordedPerSignature,
              static_cast<unsigned long long>(s.crashes), static_cast<unsigned long long>(s.timeouts),
              static_cast<unsigned long long>(s.out_of_memory), static_cast<unsigned long long>(c.seed),
              s.interrupted ? " (interrupted)" : "");
  // The groups to triage first: the unexpected ones, then the ledger's, each by count.
  std::vector<const std::pair<const judge::Signature, reports::FindingGroup>*> order;
  for (const auto& entry : s.groups) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.expected != b->second.expected ? !a->second.expected : a->second.count > b->second.count;
  });
  for (const auto* entry : order) {
    const auto& [sig, g] = *entry;
    std::string where = "first case " + std::to_string(g.first_case);
    if (g.smallest)
      where += ", smallest " + std::to_string(g.smallest->program.steps.size()) + " steps (case " +
               std::to_string(g.smallest->case_index) + ")";
    std::string note = g.expected ? " (expected: " + one_line(g.known_reason, 120) + ")" : "";
    std::printf("  %s %6llu  %s  [%s]%s\n", g.expected ? "expected  " : "UNEXPECTED",
                static_cast<unsigned long long>(g.count), sig.to_string().c_str(), where.c_str(), note.c_str());
  }
  std::printf("%s\n", coverage_line(s.coverage).c_str());
  if (s.backends && !s.backends->not_compared.empty()) {
    std::string words;
    for (const std::string& name : s.backends->not_compared)
      if (auto ob = judge::parse_observation(name)) words += (words.empty() ? "" : ", ") + std::string(judge::describe(*ob));
    std::printf("not compared: %s\n", words.c_str());
  }
  std::printf("summary: %s, findings: %s\n", (c.out / "run.json").string().c_str(),
              (c.out / "findings.jsonl").string().c_str());
  std::fflush(stdout);
}

// --junit: one test case per group, failed when unexpected (with its first case and how to replay the smallest
// recorded program), skipped when the ledger expects it; and one for the campaign itself, so that a clean run
// is a passing suite rather than an empty one.
// Each group's smallest recorded finding, by signature, read back from findings.jsonl: its first difference and
// program go in the group's failure text. A file that cannot be read leaves the groups without them.
std::map<std::string, reports::Finding> smallest_findings(const std::filesystem::path& file,
                                                          const reports::RunSummary& s) {
  std::map<std::string, reports::Finding> out;
  try {
    for (const nlohmann::json& record : reports::read_jsonl(file, reports::Malformed::Skip).records) {
      reports::Finding f = reports::finding_from_json(record);
      auto g = s.groups.find(f.signature);
      if (g != s.groups.end() && g->second.smallest && g->second.smallest->case_index == f.case_index)
        out.emplace(f.signature.to_string(), std::move(f));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity fuzz: --junit: the groups' failures name no first difference: %s\n", e.what());
  }
  return out;
}

void write_junit(const std::filesystem::path& file, const engine::CampaignConfig& c, const reports::RunSummary& s) {
  reports::JUnitSuite suite{"parity fuzz", s.seconds, {}};
  suite.cases.push_back({"parity.fuzz", "campaign (seed " + std::to_string(c.seed) + ")",
                         s.unexpected_findings ? reports::JUnitCase::Outcome::Failed : reports::JUnitCase::Outcome::Passed,
                         std::to_string(s.unexpected_findings) + " unexpected findings in " + std::to_string(s.cases) +
                             " cases", "", s.seconds});
  const std::filesystem::path findings = c.out / "findings.jsonl";
  const std::map<std::string, reports::Finding> smallest = smallest_findings(findings, s);
  for (const auto& [sig, g] : s.groups) {
    reports::JUnitCase t{"parity.fuzz.groups", sig.to_string(), reports::JUnitCase::Outcome::Skipped, "", "", 0};
    if (g.expected) {
      t.message = "expected: " + one_line(g.known_reason, 300);
    } else {
      t.outcome = reports::JUnitCase::Outcome::Failed;
      t.message = std::to_string(g.count) + " cases diverge, the first case " + std::to_string(g.first_case);
      t.details = t.message;
      if (auto f = smallest.find(sig.to_string()); f != smallest.end())
        t.details += "\nfirst difference (case " + std::to_string(f->second.case_index) + "): " +
                     describe_divergence(f->second.program, f->second.divergence, f->second.oracle) +
                     "\nprogram: " + program::to_json(f->second.program).dump();
      t.details += "\nfindings: " + findings.string() + " (replay them: parity replay --all " + findings.string() + ")";
    }
    suite.cases.push_back(std::move(t));
  }
  files::write_text_file_atomically(file, reports::junit_xml(suite), "the JUnit report");
}

// --strict-known: false, with every stale or expired entry on stderr.
bool check_known(const reports::KnownDivergences& known, const engine::CampaignResult& r) {
  const auto stale = engine::stale_known_entries(known, r.summary, r.today);
  for (const auto& s : stale)
    std::fprintf(stderr, "parity fuzz: --strict-known: known divergence \"%s\" %s\n",
                 terminal_safe(s.entry->signature).c_str(), terminal_safe(s.why).c_str());
  std::fflush(stderr);
  return stale.empty();
}

// --require-coverage: false, with every starved item on stderr, when something was never exercised.
bool check_coverage(const reports::RunSummary& s) {
  const std::vector<std::string> starved = reports::starved(s.coverage);
  if (starved.empty()) return true;
  std::fprintf(stderr,
               "parity fuzz: --require-coverage: %zu items were never exercised (the generator does not produce "
               "them often enough: extend it, or give the campaign more cases):\n",
               starved.size());
  for (const auto& item : starved) std::fprintf(stderr, "  starved: %s\n", item.c_str());
  std::fflush(stderr);
  return false;
}

// DIR's journal, when this binary can go on with it: the same LibTorch, commit, generator and planted faults
// (another would judge other programs, or the same ones otherwise), and the same shard if the environment names
// one. `given` holds the flags --resume allows (--jobs).
engine::Journal read_resumable_journal(const std::filesystem::path& dir, const engine::CampaignConfig& given) {
  engine::Journal j = engine::read_journal(dir);
  if (auto why = engine::resume_mismatches(j); !why.empty()) {
    std::string text = dir.string() + ": this parity cannot resume the campaign (";
    for (std::size_t i = 0; i < why.size(); ++i) text += (i ? "; " : "") + why[i];
    throw UsageError(text + "): resume it with the build (and PARITY_PLANT) that started it");
  }
  const reports::ShardInfo env_shard = shard_from_env();
  if (env_shard != reports::ShardInfo{} && env_shard != j.config.shard)
    throw UsageError("the environment names shard " + std::to_string(env_shard.index) + "/" +
                     std::to_string(env_shard.total) + ", but the campaign in " + dir.string() + " is shard " +
                     std::to_string(j.config.shard.index) + "/" + std::to_string(j.config.shard.total));
  if (given.isolation == engine::Isolation::Workers && j.config.isolation == engine::Isolation::Workers)
    j.config.jobs = given.jobs;
  return j;
}

}  // namespace

int fuzz_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Options o = parse_options(argv);
  std::optional<engine::Journal> journal;
  // Held until the campaign has written run.json: taken before the folder is looked at, so that two campaigns,
  // or two resumes, never both find it free.
  std::optional<files::FolderLock> lock;
  if (o.resume) {
    if (std::filesystem::is_directory(*o.resume)) lock.emplace(files::FolderLock::of_folder(*o.resume, false));
    journal = read_resumable_journal(*o.resume, o.campaign);
    // Its protocol backends shake hands again: what they declare decides what is compared.
    BackendChoice b = choose_backends(journal->config.sides, journal->config.generator.selection,
                                      in_process_oracle(journal->config.oracle));
    journal->config.sides = b.sides;
    journal->config.backends = b.record;
    o.campaign = journal->config;
  } else {
    o.campaign.shard = shard_from_env();
  }
  // Before anything is written: a campaign on cuda that cannot run is no campaign, and says why.
  if (o.campaign.generator.cuda)
    if (auto why = engine::probe_cuda().refusal(o.campaign.oracle)) {
      std::fprintf(stderr, "parity fuzz: --device cuda needs a CUDA device on %s: %s\n",
                   o.campaign.oracle == reports::Oracle::LibTorch ? "both backends" : "impl", why->c_str());
      return kExitNoDevice;
    }
  const reports::KnownDivergences known = load_known_divergences(o.campaign.known_file);
  if (!journal) {
    lock.emplace(files::FolderLock::of_folder(o.campaign.out, true));
    engine::prepare_output(o.campaign.out, o.overwrite);
  }
  // Through protocol backends, each side is named by its library.
  const auto& b = o.campaign.backends;
  CampaignPrinter printer(b ? b->impl.library + " " + b->impl.version : "",
                          b ? b->oracle.library + " " + b->oracle.version : "");
  for (const auto* k : known.expired(reports::today_utc()))
    printer.message("parity: warning: known divergence \"" + terminal_safe(k->signature) + "\" expired on " +
                    terminal_safe(k->expires) + "; it no longer matches: review it");

  if (o.campaign.backends) print_sides(*o.campaign.backends);
  std::optional<StopOnSignals> signals(std::in_place);
  std::fprintf(stderr, "parity fuzz: %sseed %llu, shard %d/%d, %s, judged by %s, output %s\n",
               journal ? ("resuming from case " + std::to_string(journal->next_case) + ", ").c_str() : "",
               static_cast<unsigned long long>(o.campaign.seed), o.campaign.shard.index, o.campaign.shard.total,
               reports::describe_isolation(o.campaign.isolation, o.campaign.jobs).c_str(),
               (o.campaign.sides.oracle_cmd.empty() ? std::string(reports::oracle_name(o.campaign.oracle))
                                                    : o.campaign.backends->oracle.library)
                   .c_str(),
               o.campaign.out.string().c_str());
  const engine::CampaignResult result =
      journal ? engine::resume_campaign(*journal, known, StopOnSignals::stop_flag(), &printer)
              : engine::run_campaign(o.campaign, known, StopOnSignals::stop_flag(), &printer);
  signals.reset();

  const reports::RunSummary& s = result.summary;
  print_final(o.campaign, s);
  if (o.junit) write_junit(*o.junit, o.campaign, s);
  // Starved items and stale ledger entries are listed even when findings decide the exit status: all need fixing.
  // A run cut short or given no case has neither judged: it says why it is no verdict instead.
  const std::optional<int> unfinished = unfinished_run_status("parity fuzz", s, s.unexpected_findings > 0);
  const bool starved = !unfinished && o.require_coverage && !check_coverage(s);
  const bool stale = !unfinished && o.strict_known && !check_known(known, result);
  if (s.unexpected_findings > 0) return kExitUnexpectedFindings;
  if (unfinished) return *unfinished;
  if (starved) return kExitStarved;
  return stale ? kExitStaleLedger : kExitOk;
}

}  // namespace parity::cli
