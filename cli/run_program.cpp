// `parity run`: one program file on both backends, step by step side by side, for people writing programs.
#include <cstdio>
#include <iostream>

#include "cli/args.h"
#include "cli/backend_flags.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/memory_limit.h"
#include "cli/oracle_flag.h"
#include "cli/render.h"
#include "engine/evaluate.h"
#include "judge/trace_json.h"
#include "program/json.h"
#include "reports/repro.h"

namespace parity::cli {

namespace {

const std::string kHelp = std::string(R"(usage: parity run PROGRAM.json [--oracle O] [--impl-cmd CMD] [--oracle-cmd CMD] [--timeout-ms T] [--memory-mb M] [--traces] [--full-values] [--cpp] [--python]

Runs a program on impl and on its oracle (in a child process) and prints each step's outcome side by side,
then the first divergence, if any.

options:
  --oracle O       libtorch (default), or impl-cpu for a program with cuda steps: impl itself, its cuda
                   tensors in host memory and its kernels run by the CPU (as `parity fuzz --oracle impl-cpu`)
  --timeout-ms T   time limit (default 10000)
  --memory-mb M    address-space limit of the child in MiB (default 4096; 0: none); a program that exceeds it
                   diverges as out_of_memory. Not applied to a program with cuda steps (the CUDA driver reserves
                   address space for the device's memory) nor in an AddressSanitizer build (its shadow memory
                   takes terabytes of address space); either says so on stderr when the flag is given
  --traces         also print both traces as JSON. A tensor of more than 4096 elements is kept as a summary
                   (count, NaNs and infinities, min, max, sum, a position-weighted checksum, a hash of the bits),
                   which is also how large values are compared
  --full-values    keep every value of every tensor in the traces, however large (memory grows with the
                   program's elements)
  --cpp            also print a C++ (LibTorch) repro
  --python         also print a Python (PyTorch) repro
)") + backend_flags_help(false) + R"(
exit status: 0 the traces agree, 1 they diverge, 2 bad usage or input.
)";

std::string cell(std::string s, std::size_t width) {
  s = one_line(std::move(s), width);
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

int run_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  std::vector<FlagSpec> flags = {{"--oracle"}, {"--timeout-ms"}, {"--memory-mb"}, {"--traces", false}, {"--full-values", false}, {"--cpp", false}, {"--python", false}};
  for (FlagSpec& f : backend_flag_specs(false)) flags.push_back(std::move(f));
  Args args("parity run", argv, flags);
  if (args.positional().size() != 1) throw UsageError("`parity run` takes one PROGRAM.json (see `parity run --help`)");
  engine::EvalOptions options;
  options.want_traces = true;
  if (auto t = args.uint64("--timeout-ms", 1, 24ull * 3600 * 1000)) options.timeout = std::chrono::milliseconds(*t);
  if (args.has("--full-values")) options.keep_values = judge::KeepValues::All;

  program::Program p = load_program_file(args.positional()[0]);
  if (auto oracle = oracle_flag(args)) options.oracle = *oracle;
  require_cuda_for(options.oracle, program::uses_cuda(p), "parity run", "this program has no cuda step");
  options.memory_limit_bytes = memory_limit_bytes(args, "parity run", program::uses_cuda(p));
  const BackendChoice backends = choose_backends(args, "parity run", false, in_process_oracle(options.oracle));
  backends.require_cuda(program::uses_cuda(p), "parity run");
  options.sides = backends.sides;
  if (backends.record) print_sides(*backends.record);
  engine::Evaluation ev = engine::evaluate_isolated(p, options);
  std::cout << cell("step", 5) << cell("op", 16) << cell("impl", 48) << reports::to_string(options.oracle) << "\n";
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const int id = static_cast<int>(i);
    std::string a = ev.impl && i < ev.impl->steps.size() ? describe_step(ev.impl->steps[i], id) : "-";
    std::string b = ev.oracle && i < ev.oracle->steps.size() ? describe_step(ev.oracle->steps[i], id) : "-";
    std::string op(program::spec(p.steps[i].op).name);
    if (!p.steps[i].grad_enabled) op += " (ng)";
    std::cout << cell(std::to_string(i), 5) << cell(op, 16) << cell(a, 47) << " " << one_line(b, 60) << "\n";
  }
  if (ev.divergence) std::cout << "divergence: " << describe_divergence(p, *ev.divergence, options.oracle) << "\n";
  else std::cout << "the traces agree\n";
  if (args.has("--traces")) {
    if (ev.impl) std::cout << judge::to_json(*ev.impl).dump(2) << "\n";
    if (ev.oracle) std::cout << judge::to_json(*ev.oracle).dump(2) << "\n";
  }
  reports::ReproSides sides;
  sides.judge = reports::repro_expectations(options.oracle, ev.oracle);
  if (options.oracle == reports::Oracle::LibTorch) {
    sides.library = ev.impl ? &*ev.impl : nullptr;
    sides.point = sides.now = ev.divergence;
    sides.judge_name = reports::judge_title(options.oracle, ev.oracle_version);
  }
  if (args.has("--cpp")) std::cout << "\n" << reports::cpp_repro(p, sides);
  if (args.has("--python")) std::cout << "\n" << reports::python_repro(p, sides);
  return ev.divergence ? 1 : 0;
}

}  // namespace parity::cli
