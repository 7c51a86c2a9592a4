#include "cli/oracle_flag.h"

#include <string>

namespace parity::cli {

std::optional<reports::Oracle> oracle_flag(const Args& args) {
  const auto v = args.value("--oracle");
  if (!v) return std::nullopt;
  const auto oracle = reports::parse_oracle(*v);
  if (!oracle) throw UsageError("--oracle must be libtorch or impl-cpu, not \"" + v->substr(0, 40) + "\"");
  return oracle;
}

void require_cuda_for(reports::Oracle oracle, bool has_cuda, std::string_view command, std::string_view work) {
  if (oracle == reports::Oracle::ImplCpu && !has_cuda)
    throw UsageError(std::string(command) + ": --oracle impl-cpu judges impl's cuda tensors by impl on the CPU: " +
                     std::string(work) + " (on the CPU both sides would be the same code)");
}

}  // namespace parity::cli
