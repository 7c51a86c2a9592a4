// `--memory-mb M`, the same flag with the same meaning in every command that evaluates programs (fuzz, run,
// replay, claims, drift, worker): the address-space limit of each process that runs a backend.
#pragma once
#include <cstddef>
#include <string_view>

#include "cli/args.h"

namespace parity::cli {

// The limit `args` asks for, in bytes: engine::kDefaultMemoryLimitBytes when the flag is absent, 0 for
// `--memory-mb 0` (none). A build that cannot cap address space (engine::kAddressSpaceLimitSupported: the
// AddressSanitizer builds) gets 0 whatever was asked, and so does work `on_cuda`: the CUDA driver reserves address
// space for the device's memory when it starts, far beyond any cap set on it. When the flag asked for a limit that
// is not applied, `command` says so on stderr, once per process.
std::size_t memory_limit_bytes(const Args& args, std::string_view command, bool on_cuda = false);

}  // namespace parity::cli
