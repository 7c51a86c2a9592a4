// `parity replay`: runs a recorded finding again and says whether it still diverges, the same way.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/args.h"
#include "cli/backend_flags.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/memory_limit.h"
#include "cli/oracle_flag.h"
#include "cli/render.h"
#include "engine/evaluate.h"
#include "files/output_file.h"
#include "generators/program_gen.h"
#include "impl_backend/planted_faults.h"
#include "oracle/torch_backend.h"
#include "reports/build_info.h"
#include "reports/junit.h"
#include "reports/repro.h"

namespace parity::cli {

namespace {

const std::string kHelp = std::string(R"(usage: parity replay FILE [--index N] [--oracle O] [--impl-cmd CMD] [--oracle-cmd CMD] [--timeout-ms T] [--memory-mb M] [--full-values] [--cpp | --python] [-o FILE] [--all [--junit F]] [--known FILE]

Runs the program of a finding again on impl and on its oracle (in a child process, as `parity fuzz` does):
LibTorch, or impl on the CPU for a finding of `parity fuzz --oracle impl-cpu` (the finding says which). It
prints the verdict: "still diverges: <signature> ..." or "agrees now". A finding made with other planted
faults, another LibTorch, another parity commit or another generator is still replayed, with a warning on
stderr for each difference: the verdict may then differ for that reason.

FILE is a finding (one JSON object), a findings.jsonl (finding N, counted from 0; default 0), or a program.

options:
  --index N        which finding of a findings.jsonl
  --oracle O       libtorch or impl-cpu (a program with cuda steps only): what judges impl, in place of the
                   finding's own (a program file's default: libtorch)
  --timeout-ms T   time limit (default 10000)
  --memory-mb M    address-space limit of the child in MiB (default 4096; 0: none); a program that exceeds it
                   diverges as out_of_memory. Not applied to a program with cuda steps (the CUDA driver reserves
                   address space for the device's memory) nor in an AddressSanitizer build (its shadow memory
                   takes terabytes of address space); either says so on stderr when the flag is given
  --full-values    compare every value of a tensor of more than 4096 elements one by one, as a summary
                   cannot say which element differs (memory grows with the program's elements)
  --cpp            print a C++ (LibTorch) repro of the program: stdout then holds the code alone (the
                   verdict goes to stderr), so that `parity replay F --cpp > repro.cpp` compiles
  --python         print a Python (PyTorch) repro of the program, as --cpp does
  -o, --output F   write the repro to F instead of stdout (one of --cpp and --python)
  --all            replay every finding of FILE (a findings.jsonl, a finding, a program, or a folder of such
                   *.json and *.jsonl files) as a regression suite: one line each, then the counts; exit 1
                   when one still diverges that the ledger does not expect
  --junit F        with --all, also write the verdicts as JUnit XML to F (one test case each: failed when
                   it still diverges, skipped when the ledger expects it)
  --known FILE     known divergences (default: reports/known_divergences.json of the source tree, if present):
                   a divergence that an entry in force covers (judged by LibTorch) is named with the entry
)") + backend_flags_help(false) + R"(
exit status: 0 agrees now, 1 still diverges (a known divergence too: the verdict names its entry; with --all,
one that no entry expects), 2 bad usage or input.
)";

// What the finding records of the build that found it, against this binary: a difference is one line each.
// `said` holds the lines already printed: `replay --all` says each once, not once per finding.
void warn_if_made_elsewhere(const reports::Finding& f, std::set<std::string>& said) {
  auto warn = [&](const std::string& line) {
    if (said.insert(line).second) std::cerr << "parity replay: warning: " << line << "\n";
  };
  // A planted finding diverges again only with the same faults: a verdict without them would mislead.
  if (f.planted_faults != impl_backend::planted_fault_texts()) {
    const std::string faults = program::join(f.planted_faults, ",");
    warn("this finding was made with " + std::string(impl_backend::kPlantVariable) + "=" +
         (faults.empty() ? std::string("(unset)") : one_line(faults, 200)) +
         ", which differs from now: set it the same way to replay it as it was found");
  }
  auto differs = [&](const std::string& what, const std::string& then, const std::string& now,
                     const std::string& consequence) {
    if (then == now) return;
    warn("this finding was made with " + what + " " + one_line(then, 100) + ", this binary has " + now + ": " +
         consequence);
  };
  differs("LibTorch", f.libtorch_version, oracle::torch_version(),
          "the judge itself changed, so the verdict may differ for that reason alone");
  differs("parity commit", f.parity_commit, std::string(reports::parity_commit()),
          "impl or the harness may have changed since");
  differs("generator version", std::to_string(f.generator_version), std::to_string(generators::generator_version()),
          "the program is replayed as recorded, but its seed would now generate another one");
}

}  // namespace

namespace {

// What one replay found.
struct Verdict {
  bool diverges = false;
  std::string line;                                // "still diverges: ..." or "agrees now ...", one line
  const reports::KnownDivergence* known = nullptr;  // the ledger entry in force that expects the divergence
  engine::Evaluation evaluation;
  reports::Oracle oracle = reports::Oracle::LibTorch;
};

// Replays one input with the command's flags: its own oracle and backends unless the flags name others.
Verdict replay_one(const ReplayInput& in, const Args& args, engine::EvalOptions options,
                   const reports::KnownDivergences& known, std::set<std::string>& warned) {
  options.memory_limit_bytes = memory_limit_bytes(args, "parity replay", program::uses_cuda(in.program));
  if (in.finding) warn_if_made_elsewhere(*in.finding, warned);
  if (in.finding) options.oracle = in.finding->oracle;
  if (auto oracle = oracle_flag(args)) {
    if (in.finding && *oracle != in.finding->oracle)
      std::cerr << "parity replay: warning: this finding was judged by " << reports::oracle_name(in.finding->oracle)
                << "; replaying it judged by " << reports::oracle_name(*oracle) << " as asked\n";
    options.oracle = *oracle;
  }
  require_cuda_for(options.oracle, program::uses_cuda(in.program), "parity replay", "this program has no cuda step");
  BackendChoice backends = choose_backends(args, "parity replay", false, in_process_oracle(options.oracle));
  // A finding made through protocol backends is replayed through the same ones unless the flags name others.
  if (in.finding && !args.has("--impl-cmd") && !args.has("--oracle-cmd") &&
      (!in.finding->impl_command.empty() || !in.finding->oracle_command.empty())) {
    engine::EvalSides recorded = backends.sides;
    recorded.impl_cmd = in.finding->impl_command;
    recorded.oracle_cmd = in.finding->oracle_command;
    backends = choose_backends(recorded, {}, in_process_oracle(options.oracle));
  }
  backends.require_cuda(program::uses_cuda(in.program), "parity replay");
  options.sides = backends.sides;
  if (backends.record) print_sides(*backends.record);
  Verdict v;
  v.oracle = options.oracle;
  v.evaluation = engine::evaluate_isolated(in.program, options);
  const std::string recorded = in.finding ? in.finding->signature.to_string() : "";
  if (const auto& d = v.evaluation.divergence) {
    v.diverges = true;
    const judge::Signature sig = judge::signature(in.program, *d);
    v.line = "still diverges: " + describe_divergence(in.program, *d, options.oracle);
    if (!recorded.empty() && recorded != sig.to_string()) v.line += " (recorded as " + recorded + ")";
    // As a campaign would have labelled it: the ledger records where impl differs from LibTorch only.
    if (options.oracle == reports::Oracle::LibTorch)
      v.known = known.match(sig, oracle::torch_version(), reports::today_utc());
  } else {
    v.line = "agrees now" + (recorded.empty() ? std::string() : " (recorded as " + recorded + ")");
  }
  if (in.finding && in.finding->reproducible && in.finding->reproducible->flaky())
    std::cerr << "parity replay: note: this finding is flaky: it diverged on " << in.finding->reproducible->diverged
              << " of " << in.finding->reproducible->runs << " confirming runs, so one replay "
              << (v.diverges ? "that diverges" : "that agrees") << " says little; replay it several times\n";
  return v;
}

// A repro of the replay: it checks the finding's first difference (this replay's, for a program), with the
// library's side as it is now, so that a repro of a fixed finding passes. Judged by impl on the CPU, the repro's
// PyTorch judged neither side: it only shows values.
reports::ReproSides repro_sides(const ReplayInput& in, const Verdict& v) {
  reports::ReproSides sides;
  sides.judge = reports::repro_expectations(v.oracle, v.evaluation.oracle);
  if (v.oracle != reports::Oracle::LibTorch) return sides;
  sides.library = v.evaluation.impl ? &*v.evaluation.impl : nullptr;
  sides.point = in.finding ? std::optional(in.finding->divergence) : v.evaluation.divergence;
  sides.now = v.evaluation.divergence;
  sides.judge_name = reports::judge_title(v.oracle, v.evaluation.oracle_version.empty() ? oracle::torch_version()
                                                                                        : v.evaluation.oracle_version);
  if (in.finding) sides.found_by = in.finding->parity_commit;
  return sides;
}

std::string expectation(const reports::KnownDivergence& k) {
  return "expected: known divergence \"" + k.signature + "\": " + one_line(k.reason, 300);
}

// --all: every input in turn, one line each, then the count; 1 when one diverges that the ledger does not expect.
int replay_all(const std::filesystem::path& path, const Args& args, const engine::EvalOptions& options,
               const reports::KnownDivergences& known, const std::optional<std::string>& junit) {
  const std::vector<LabelledInput> inputs = load_replay_inputs(path);
  reports::JUnitSuite suite{"parity replay", 0, {}};
  std::size_t agree = 0, expected = 0, diverge = 0;
  std::set<std::string> warned;  // findings of one campaign share what they were made with: each warning once
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const LabelledInput& item = inputs[i];
    const auto t0 = std::chrono::steady_clock::now();
    const Verdict v = replay_one(item.input, args, options, known, warned);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[" << (i + 1) << "/" << inputs.size() << "] " << terminal_safe(item.label) << ": " << v.line
              << (v.known ? " (" + expectation(*v.known) + ")" : "") << "\n"
              << std::flush;
    reports::JUnitCase c{item.label, item.input.finding ? item.input.finding->signature.to_string() : "program",
                         reports::JUnitCase::Outcome::Passed, "", "", seconds};
    if (v.diverges && v.known) {
      ++expected;
      c.outcome = reports::JUnitCase::Outcome::Skipped;
      c.message = expectation(*v.known);
    } else if (v.diverges) {
      ++diverge;
      c.outcome = reports::JUnitCase::Outcome::Failed;
      c.message = v.line;
      c.details = v.line + "\nreplay it: parity replay " + item.replay_args;
    } else {
      ++agree;
    }
    suite.cases.push_back(std::move(c));
  }
  suite.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "parity replay: " << inputs.size() << " replayed: " << agree << " agree now, " << diverge
            << " still diverge, " << expected << " still diverge as the ledger expects\n";
  if (junit) files::write_text_file_atomically(*junit, reports::junit_xml(suite), "the JUnit report");
  return diverge ? 1 : 0;
}

}  // namespace

int replay_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  std::vector<FlagSpec> flags = {{"--index"}, {"--oracle"}, {"--timeout-ms"}, {"--memory-mb"}, {"--full-values", false},
                                 {"--cpp", false}, {"--python", false}, {"--output", true, "-o"}, {"--known"},
                                 {"--all", false}, {"--junit"}};
  for (FlagSpec& f : backend_flag_specs(false)) flags.push_back(std::move(f));
  Args args("parity replay", argv, flags);
  if (args.positional().size() != 1)
    throw UsageError("`parity replay` takes one FILE (see `parity replay --help`)");
  const bool all = args.has("--all");
  const bool cpp = args.has("--cpp"), python = args.has("--python");
  const std::optional<std::string> output = args.value("--output"), junit = args.value("--junit");
  if (output && output->empty()) throw UsageError("--output needs a file to write the repro to");
  if (junit && junit->empty()) throw UsageError("--junit needs a file to write the report to");
  if (output && cpp == python)
    throw UsageError("--output writes one repro: give --cpp or --python with it, not " +
                     std::string(cpp ? "both" : "neither"));
  if (all && (cpp || python || args.has("--index")))
    throw UsageError("--all replays every finding: --index, --cpp and --python take one");
  if (junit && !all) throw UsageError("--junit reports a regression suite: give it with --all");
  std::optional<std::size_t> index;
  if (auto n = args.uint64("--index", 0, std::uint64_t{1} << 40)) index = static_cast<std::size_t>(*n);
  engine::EvalOptions options;
  options.want_traces = true;
  if (auto t = args.uint64("--timeout-ms", 1, 24ull * 3600 * 1000)) options.timeout = std::chrono::milliseconds(*t);
  if (args.has("--full-values")) options.keep_values = judge::KeepValues::All;
  std::optional<std::filesystem::path> known_file;
  if (auto k = args.value("--known")) {
    if (k->empty()) throw UsageError("--known needs a file");
    known_file = *k;
  }
  const reports::KnownDivergences known = load_known_divergences(known_file);
  if (all) return replay_all(args.positional()[0], args, options, known, junit);

  const ReplayInput in = load_replay_input(args.positional()[0], index);
  std::set<std::string> warned;
  const Verdict v = replay_one(in, args, options, known, warned);
  // With a repro asked for, stdout is the repro's alone.
  std::ostream& verdict = cpp || python ? std::cerr : std::cout;
  verdict << v.line << (v.known ? "\n" + expectation(*v.known) : "") << "\n";
  const reports::ReproSides sides = repro_sides(in, v);
  if (output) {
    files::write_text_file_atomically(*output, cpp ? reports::cpp_repro(in.program, sides)
                                                   : reports::python_repro(in.program, sides), "the repro");
    std::cerr << "parity replay: repro written: " << *output << "\n";
    return v.diverges ? 1 : 0;
  }
  if (cpp) std::cout << reports::cpp_repro(in.program, sides);
  if (cpp && python) std::cout << "\n";
  if (python) std::cout << reports::python_repro(in.program, sides);
  return v.diverges ? 1 : 0;
}

}  // namespace parity::cli
