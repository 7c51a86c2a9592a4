// The flags that choose what a command compares, the same in fuzz, run and replay: `--impl-cmd CMD` and
// `--oracle-cmd CMD` (protocol backends: docs/backend-protocol.md), `--backend-start-ms`, and, for the commands
// that generate programs, `--ops`, `--skip-ops` and `--dtypes`. Each protocol backend is started once here, in the
// command's own process, to read its handshake: a backend that cannot be used is refused before any work starts.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "engine/evaluate.h"
#include "generators/selection.h"
#include "reports/run_summary.h"

namespace parity::cli {

// The flags above, to add to a command's own; `generating`: with --ops, --skip-ops and --dtypes.
std::vector<FlagSpec> backend_flag_specs(bool generating);
// The help text's lines for them.
std::string backend_flags_help(bool generating);

struct BackendChoice {
  engine::EvalSides sides;
  generators::Selection selection;                      // what both sides run, narrowed by the flags
  std::optional<reports::RunSummary::Backends> record;  // set when either side is a protocol backend
  bool cuda = true;  // every protocol side declares the cuda device
  // Throws UsageError, worded for `command`, when work on cuda meets a protocol side without the device.
  void require_cuda(bool needed, const std::string& command) const;
};

// Reads the flags, starts each protocol backend for its handshake, and intersects what both sides declare.
// `command` names the command in messages; `in_process_oracle` is the in-process oracle's name and version.
// Throws UsageError for a bad flag and for a backend that cannot be used, saying why.
BackendChoice choose_backends(const Args& args, const std::string& command, bool generating,
                              const reports::RunSummary::Side& in_process_oracle);

// The same choice for a campaign resumed from its journal: its commands and selection, whose backends must still
// declare what the selection uses.
BackendChoice choose_backends(const engine::EvalSides& sides, const generators::Selection& selection,
                              const reports::RunSummary::Side& in_process_oracle);

// The in-process oracle's side record: LibTorch and its version, or impl on the CPU.
reports::RunSummary::Side in_process_oracle(reports::Oracle oracle);

// Says on stderr which library each side is and what is not compared.
void print_sides(const reports::RunSummary::Backends& record);

}  // namespace parity::cli
