#include "cli/memory_limit.h"

#include <cstdint>
#include <iostream>

#include "cli/setting_flag.h"
#include "engine/evaluate.h"
#include "engine/evaluation_process.h"

namespace parity::cli {

std::size_t memory_limit_bytes(const Args& args, std::string_view command, bool on_cuda) {
  std::size_t limit = engine::kDefaultMemoryLimitBytes;
  const auto asked = uint64_in(args, engine::kMemoryMbRange);
  if (asked) limit = static_cast<std::size_t>(*asked) << 20;
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
