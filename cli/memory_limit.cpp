#include "cli/memory_limit.h"

#include <cstdint>
#include <iostream>

#include "cli/setting_flag.h"
#include "engine/evaluate.h"
#include "engine/evaluation_process.h"
#include "engine/memory_probe.h"
#include "oracle/torch_backend.h"

namespace parity::cli {

namespace {

// A limit no case can run under is refused, naming the least that can: below what starting the backends takes,
// every case would end as a start-up timeout (engine/memory_probe.h).
void require_room_to_start(std::size_t limit, std::string_view command) {
  const auto start = engine::startup_address_space();
  if (!start) return;  // not measurable here: the limit is taken as given
  const std::size_t least = *start + engine::kCaseHeadroomBytes;
  if (limit >= least) return;
  const auto mib = [](std::size_t bytes) { return std::to_string((bytes + (std::size_t{1} << 20) - 1) >> 20); };
  throw UsageError(std::string(command) + ": --memory-mb " + mib(limit) +
                   " is too little for any case: a process evaluating programs takes " + mib(*start) +
                   " MiB of address space to start impl and LibTorch " + oracle::torch_version() +
                   " and run a small program (measured now), and a case needs " + mib(engine::kCaseHeadroomBytes) +
                   " more: give --memory-mb " + mib(least) + " or more, or 0 for no limit");
}

}  // namespace

std::size_t memory_limit_bytes(const Args& args, std::string_view command, bool on_cuda) {
  std::size_t limit = engine::kDefaultMemoryLimitBytes;
  const auto asked = uint64_in(args, engine::kMemoryMbRange);
  if (asked) limit = static_cast<std::size_t>(*asked) << 20;
  if (limit != 0 && engine::kAddressSpaceLimitSupported && !on_cuda && asked) require_room_to_start(limit, command);
  if (limit == 0 || (engine::kAddressSpaceLimitSupported && !on_cuda)) return limit;
  // The default cap is dropped quietly (--help says so): a note on every command would change the output of every
  // command an ASan build runs. A cap given explicitly and not applied is said.
  if (!asked) return 0;
  static bool said = false;
  if (!said)
    std::cerr << command << ": note: "
              << (on_cuda ? "work on cuda starts the CUDA driver, which reserves address space for the device's "
                            "memory"
                          : "this is an AddressSanitizer build, which reserves terabytes of address space for its "
                            "shadow memory")
              << ": --memory-mb (" << (limit >> 20) << " MiB) is not applied, and a program is not stopped for the "
              << "memory it takes\n";
  said = true;
  return 0;
}

}  // namespace parity::cli
