// The subcommands of `parity`. Each takes its arguments (after the subcommand's name) and returns the exit
// code: 0 success/agreement, 1 unexpected findings/divergence, 2 bad usage or input (thrown as exceptions and
// reported by main); the campaign commands' others are in cli/exit_status.h.
#pragma once
#include <string>
#include <vector>

namespace parity::cli {

int fuzz_command(const std::vector<std::string>& args);
int replay_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int list_command(const std::vector<std::string>& args);
int claims_command(const std::vector<std::string>& args);
int merge_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int drift_command(const std::vector<std::string>& args);
int worker_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);

}  // namespace parity::cli
