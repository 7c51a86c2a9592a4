// Files parity reads (findings, run summaries, programs, the known-divergences ledger): only a regular file of a
// bounded size is read, so that a FIFO cannot hang a command nor a device (/dev/zero) feed it without end.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace parity::files {

inline constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{1} << 30;

// The whole of `path`, checked before anything is read: opened without blocking (a FIFO with no writer would
// block the open itself), then refused unless fstat says it is a regular file of at most `max_bytes`. A symbolic
// link is followed: what it names is checked. Throws FileError naming the path and what to do.
std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes = kMaxInputBytes);

}  // namespace parity::files
