// `--oracle O`, the same flag with the same meaning in every command that evaluates programs on impl and a judge
// (fuzz, run, replay): libtorch, or impl-cpu (reports/oracle.h), which judges impl's cuda tensors and so needs
// programs with cuda steps.
#pragma once
#include <optional>
#include <string_view>

#include "cli/args.h"
#include "reports/oracle.h"

namespace parity::cli {

// The oracle `args` names; nullopt when the flag is absent. Throws UsageError for another value.
std::optional<reports::Oracle> oracle_flag(const Args& args);

// Throws UsageError, worded for `command`, when `oracle` is impl-cpu and the work has no cuda step: both sides
// would run the same code.
void require_cuda_for(reports::Oracle oracle, bool has_cuda, std::string_view command, std::string_view work);

}  // namespace parity::cli
