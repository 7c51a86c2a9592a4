// `parity`: differential checker of impl against LibTorch. Dispatches to subcommands and turns every error
// into one line on stderr and exit code 2: bad input never crashes it.
#include <cstdio>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "engine/isolation.h"
#include "files/error.h"
#include "generators/program_gen.h"
#include "impl_backend/planted_faults.h"
#include "oracle/torch_backend.h"
#include "program/internal_assert.h"
#include "program/json.h"
#include "program/spelling.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/schema_version.h"

namespace {

constexpr std::string_view kHelp = R"(usage: parity <command> [options]

Checks that an in-house tensor library behaves like LibTorch: generated programs run on both, their traces
(values, sizes, strides, aliasing, versions, autograd state) are compared, differences are shrunk and reported.

commands:
  fuzz     run a campaign of generated programs          parity fuzz --seconds 60 --out DIR
  replay   re-run a recorded finding                      parity replay DIR/findings.jsonl --index 0
  run      run one program file on both, side by side     parity run program.json
  list     print the op table                             parity list
  claims   check the seed tutorials' claims on both       parity claims --markdown
  merge    join the outputs of a sharded campaign         parity merge SHARD0 SHARD1 -o DIR
  report   an HTML page of a campaign, to triage          parity report DIR -o report.html
  drift    what changed between two LibTorch releases    parity drift --against build-torch-2.15/parity
  serve    a backend of parity's over the backend protocol parity serve --backend impl
  worker   (internal) LibTorch traces for another drift  parity worker

`parity <command> --help` describes each command; `parity --version` says which parity, LibTorch, generator
and schemas this is.
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "parity: error: %s\n", parity::cli::one_line(message).c_str());
  return 2;
}

// Test-only bugs in impl (PARITY_PLANT) change every verdict: refuse a malformed request, and say so loudly.
void warn_if_planted() {
  std::vector<std::string> faults;
  try {
    faults = parity::impl_backend::planted_fault_texts();
  } catch (const std::invalid_argument& e) {
    throw parity::cli::UsageError(e.what());
  }
  if (faults.empty()) return;
  std::fprintf(stderr, "parity: %s is set: impl carries deliberate bugs (%s); divergences they cause are planted\n",
               parity::impl_backend::kPlantVariable, parity::program::join(faults, ", ").c_str());
}

int dispatch(const std::vector<std::string>& args) {
  using namespace parity::cli;
  if (args.empty()) throw UsageError("no command given (commands: fuzz, replay, run, list, claims, merge, report, drift, serve; see `parity --help`)");
  const std::string& command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kHelp;
    return 0;
  }
  // What a bug report or a CI log needs to say which parity judged what.
  if (command == "--version") {
    std::cout << "parity " << parity::reports::parity_commit() << "\n"
              << "LibTorch " << parity::oracle::torch_version() << " (the oracle this build links)\n"
              << "generator version " << parity::generators::generator_version() << ", report schema "
              << parity::reports::kReportSchemaVersion << ", program schema " << parity::program::kSchemaVersion
              << "\n";
    return 0;
  }
  // Only the commands that run impl care; report, merge and list read files or tables.
  if (command == "fuzz" || command == "replay" || command == "run" || command == "claims" || command == "drift" ||
      command == "serve")
    warn_if_planted();
  if (command == "fuzz") return fuzz_command(rest);
  if (command == "replay") return replay_command(rest);
  if (command == "run") return run_command(rest);
  if (command == "list") return list_command(rest);
  if (command == "claims") return claims_command(rest);
  if (command == "merge") return merge_command(rest);
  if (command == "report") return report_command(rest);
  if (command == "drift") return drift_command(rest);
  if (command == "worker") return worker_command(rest);
  if (command == "serve") return serve_command(rest);
  throw UsageError("unknown command \"" + command + "\"" +
                   parity::program::did_you_mean(command, {"fuzz", "replay", "run", "list", "claims", "merge", "report",
                                                           "drift", "serve", "--help", "--version"}) +
                   " (commands: fuzz, replay, run, list, claims, merge, report, drift, serve; see `parity --help`)");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const parity::cli::UsageError& e) {
    return fail(e.what());
  } catch (const parity::program::JsonError& e) {
    return fail(e.what());
  } catch (const parity::reports::ReportError& e) {
    return fail(e.what());
  } catch (const parity::files::FileError& e) {
    return fail(e.what());
  } catch (const parity::engine::EvaluationError& e) {
    return fail(std::string("cannot evaluate programs: ") + e.what());
  } catch (const parity::program::InternalError& e) {
    std::fprintf(stderr, "parity: internal error (a bug in parity, please report it): %s\n",
                 parity::cli::one_line(e.what()).c_str());
    return 70;  // EX_SOFTWARE
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}
