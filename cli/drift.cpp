// `parity drift` (what changed between two PyTorch releases) and `parity worker` (the LibTorch traces another
// build's drift asks this build for).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "cli/args.h"
#include "cli/backend_flags.h"
#include "cli/campaign_printer.h"
#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/memory_limit.h"
#include "cli/setting_flag.h"
#include "engine/drift.h"
#include "engine/trace_worker.h"
#include "engine/worker_pool.h"
#include "engine/worker_protocol.h"
#include "files/folder_lock.h"
#include "oracle/torch_backend.h"
#include "program/json.h"

namespace parity::cli {

namespace {

const std::string kHelp = std::string(R"(usage: parity drift --against OTHER_PARITY [--seconds S | --cases N] [--seed K] [--out DIR]
                    [--max-steps N] [--timeout-ms T] [--memory-mb M] [--shrink-share F] [--overwrite]
       parity drift [--against OTHER_PARITY] [--impl-cmd CMD] [--oracle-cmd CMD] [options as above]

What changed between two PyTorch releases: generated programs run on this build's LibTorch and on the LibTorch
of another parity build (OTHER_PARITY, its parity binary, e.g. build-torch-2.15/parity), each in a worker
process of its own build; their traces (values, aliasing, strides, versions, requires_grad, grad_fn names,
gradients, errors) are compared observation by observation, and each difference is shrunk to a minimal program.

Writes, as a campaign does, DIR/findings.jsonl (this build's LibTorch on the impl side, the other's on the oracle
side), DIR/run.json (with a `drift` field naming the other release) and DIR/report.html, grouped by signature.
Both builds must read the same programs: build them from one source tree. SIGINT (Ctrl-C), SIGTERM, SIGHUP and
SIGUSR1 stop it cleanly: its output is written, run.json marked interrupted.

options:
  --against P       the other build's parity binary (required)
  --seconds S       time budget (default 60 when --cases is not given)
  --cases N         case budget: cases 0..N-1
  --seed K          campaign seed (default: random, printed)
  --out DIR         output folder (default parity-drift)
  --max-steps N     longest generated program
  --timeout-ms T    time limit of one program on one LibTorch (default 10000)
  --memory-mb M     address-space limit of each worker in MiB (default 4096; 0: none); a program that exceeds
                    it is an out_of_memory difference. Not applied in an AddressSanitizer build (its shadow
                    memory takes terabytes of address space), which says so on stderr
                    when the flag is given
  --shrink-share F  share of the time budget shrinking may use (default 0.25)
  --overwrite       replace an earlier run's output in DIR
)") + backend_flags_help(false) + R"(
With --impl-cmd or --oracle-cmd either release may be a protocol backend (docs/backend-protocol.md), e.g.
--oracle-cmd "python3 backends/python/torch_backend.py" with any pip-installed PyTorch: this build's side is
`parity serve --backend libtorch` unless --impl-cmd names another, the other side OTHER_PARITY's unless
--oracle-cmd does. The run is then a campaign between the two (run.json's `backends` names them) judged with no
ledger.

exit status: 0 the releases agree on every case of the budget, 1 they differ somewhere (however the run ended),
2 bad usage or setup, 5 a signal stopped the run before its budget was spent, 6 no case ran (as `parity fuzz`).
)";

constexpr std::string_view kWorkerHelp = R"(usage: parity worker [--memory-mb M]

Internal: serves `parity drift` of another build. Reads requests from standard input (a socket) and answers each
with this build's LibTorch trace of the program (engine/worker_protocol.h), until the other end closes it.

options:
  --memory-mb M    its address-space limit in MiB (default 4096; 0: none), as `parity drift --memory-mb`
)";

// Either drift's end: one line per group, the page, the exit status.
int finish(const reports::RunSummary& s, const std::filesystem::path& out) {
  for (const auto& [sig, g] : s.groups)
    std::printf("  %6llu  %s  [first case %llu%s]\n", static_cast<unsigned long long>(g.count),
                sig.to_string().c_str(), static_cast<unsigned long long>(g.first_case),
                g.smallest ? (", smallest " + std::to_string(g.smallest->program.steps.size()) + " steps").c_str()
                           : "");
  std::fflush(stdout);
  // The page, as `parity report` makes it for a campaign.
  const int page = report_command({out.string(), "-o", (out / "report.html").string()});
  if (page != 0) std::fprintf(stderr, "parity drift: the HTML report could not be built\n");
  const std::optional<int> unfinished = unfinished_run_status("parity drift", s, s.findings > 0);
  if (s.findings > 0) return kExitUnexpectedFindings;
  return unfinished.value_or(kExitOk);
}

// A parity binary's LibTorch behind the backend protocol.
std::string serve_libtorch(const std::string& parity) {
  if (parity.find('\'') != std::string::npos) throw UsageError("a parity path must not contain a single quote");
  return "'" + parity + "' serve --backend libtorch";
}

// Drift with a protocol backend on either side: a campaign between the two, judged with no ledger.
int protocol_drift(const engine::DriftConfig& d, const Args& args) {
  engine::EvalSides sides;
  sides.impl_cmd = args.value("--impl-cmd").value_or(serve_libtorch(std::filesystem::read_symlink("/proc/self/exe")));
  sides.oracle_cmd = args.has("--oracle-cmd") ? *args.value("--oracle-cmd") : serve_libtorch(d.other_parity);
  if (sides.impl_cmd.empty() || sides.oracle_cmd.empty()) throw UsageError("--impl-cmd and --oracle-cmd need a command");
  if (auto t = uint64_in(args, engine::kBackendStartMsRange)) sides.start_timeout = std::chrono::milliseconds(*t);
  const BackendChoice backends = choose_backends(sides, {}, in_process_oracle(reports::Oracle::LibTorch));
  engine::CampaignConfig c;
  c.seed = d.seed;
  c.seconds = d.seconds;
  c.cases = d.cases;
  c.out = d.out;
  c.generator = d.generator;
  c.generator.selection = backends.selection;
  c.sides = backends.sides;
  c.backends = backends.record;
  c.timeout = d.timeout;
  c.memory_limit_bytes = d.memory_limit_bytes;
  c.shrink_share = d.shrink_share;
  c.jobs = engine::usable_cores();
  const files::FolderLock lock = files::FolderLock::of_folder(c.out, true);
  engine::prepare_output(c.out, args.has("--overwrite"));
  print_sides(*c.backends);
  std::optional<StopOnSignals> signals(std::in_place);
  CampaignPrinter printer(c.backends->impl.library + " " + c.backends->impl.version,
                          c.backends->oracle.library + " " + c.backends->oracle.version);
  const engine::CampaignResult r = engine::run_campaign(c, reports::KnownDivergences{}, StopOnSignals::stop_flag(), &printer);
  signals.reset();
  const reports::RunSummary& s = r.summary;
  std::printf("parity drift: %s against %s: %llu cases in %.1f s (%.1f/s), %llu differences in %zu groups; seed "
              "%llu%s\n",
              (c.backends->impl.library + " " + c.backends->impl.version).c_str(),
              (c.backends->oracle.library + " " + c.backends->oracle.version).c_str(),
              static_cast<unsigned long long>(s.cases), s.seconds, s.cases_per_second,
              static_cast<unsigned long long>(s.findings), s.groups.size(), static_cast<unsigned long long>(c.seed),
              s.interrupted ? " (interrupted)" : "");
  return finish(s, c.out);
}

}  // namespace

int drift_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  std::vector<FlagSpec> flags = {{"--against"}, {"--seconds"}, {"--cases"}, {"--seed"}, {"--out"},
                                 {"--max-steps"}, {"--timeout-ms"}, {"--memory-mb"}, {"--shrink-share"},
                                 {"--overwrite", false}};
  for (FlagSpec& f : backend_flag_specs(false)) flags.push_back(std::move(f));
  Args args("parity drift", argv, flags);
  if (!args.positional().empty())
    throw UsageError("unexpected argument \"" + args.positional()[0] + "\" (see `parity drift --help`)");
  engine::DriftConfig c;
  const auto other = args.value("--against");
  if (other && other->empty()) throw UsageError("--against needs the other build's parity binary");
  if (!other && !args.has("--oracle-cmd"))
    throw UsageError("--against needs the other build's parity binary (or --oracle-cmd a protocol backend)");
  c.other_parity = other.value_or("");
  c.seconds = number_in(args, engine::kSecondsRange);
  c.cases = uint64_in(args, engine::kCasesRange);
  if (!c.seconds && !c.cases) c.seconds = 60.0;
  if (auto s = args.uint64("--seed", 0, UINT64_MAX)) c.seed = *s;
  else c.seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  if (auto d = args.value("--out")) {
    if (d->empty()) throw UsageError("--out needs a folder");
    c.out = *d;
  }
  if (auto k = uint64_in(args, engine::kMaxStepsRange)) c.generator.max_steps = static_cast<int>(*k);
  if (auto t = uint64_in(args, engine::kTimeoutMsRange)) c.timeout = std::chrono::milliseconds(*t);
  c.memory_limit_bytes = memory_limit_bytes(args, "parity drift");
  if (auto f = number_in(args, engine::kShrinkShareRange)) c.shrink_share = *f;
  if (args.has("--impl-cmd") || args.has("--oracle-cmd")) return protocol_drift(c, args);
  // Before anything is written: a binary that is not parity (or not one this build can talk to) is refused.
  const std::string other_version = [&] {
    try {
      return engine::TraceWorker(c.other_parity, c.timeout, c.memory_limit_bytes, nullptr).handshake();
    } catch (const engine::EvaluationError& e) {
      throw UsageError(std::string("--against: ") + e.what());
    }
  }();
  const files::FolderLock lock = files::FolderLock::of_folder(c.out, true);
  engine::prepare_output(c.out, args.has("--overwrite"));

  // Before the first line, so that a signal sent once it is printed finds the handlers in place.
  std::optional<StopOnSignals> signals(std::in_place);
  std::fprintf(stderr, "parity drift: LibTorch %s (this build) against LibTorch %s (%s), seed %llu, output %s\n",
               oracle::torch_version().c_str(), other_version.c_str(), c.other_parity.c_str(),
               static_cast<unsigned long long>(c.seed), c.out.string().c_str());
  // Both sides are LibTorch: each is named by its release.
  CampaignPrinter printer("LibTorch " + oracle::torch_version(), "LibTorch " + other_version);
  const reports::RunSummary s = engine::run_drift(c, StopOnSignals::stop_flag(), &printer);
  signals.reset();

  std::printf("parity drift: LibTorch %s against %s: %llu cases in %.1f s (%.1f/s), %llu differences in %zu "
              "groups; seed %llu%s\n",
              s.libtorch_version.c_str(), s.drift->other_libtorch_version.c_str(),
              static_cast<unsigned long long>(s.cases), s.seconds, s.cases_per_second,
              static_cast<unsigned long long>(s.findings), s.groups.size(), static_cast<unsigned long long>(c.seed),
              s.interrupted ? " (interrupted)" : "");
  return finish(s, c.out);
}

int worker_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kWorkerHelp)) return 0;
  Args args("parity worker", argv, {{"--memory-mb"}});
  // The parent checked its limit against what starting takes; an AddressSanitizer build applies none (below).
  const std::size_t limit = static_cast<std::size_t>(uint64_in(args, engine::kMemoryMbRange).value_or(0)) << 20;
  // No parent watches this worker's progress across the exec: its own record of it is enough for the loop.
  static engine::Progress progress;
  engine::serve_requests(0, ::getppid(), limit, reports::Oracle::LibTorch, &progress);
}

}  // namespace parity::cli
