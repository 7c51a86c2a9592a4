// The address space an evaluating process needs before its first case. A worker is forked from this process, so it
// starts with this process's mappings, then starts both backends (LibTorch's thread pools map a stack per thread)
// and runs the case. Below that, no case can run at all: LibTorch's thread pool waits forever for threads it could
// not create, so every case ended as a 10-second "timeout while starting the backends" instead of being refused.
// Measured, not assumed: it differs between LibTorch releases, builds and machines (their core counts).
#pragma once
#include <cstddef>
#include <optional>

namespace parity::engine {

// Room for a small case's own tensors on top of what starting takes: the least limit worth running a case under.
inline constexpr std::size_t kCaseHeadroomBytes = std::size_t{64} << 20;

// The peak address space (VmPeak) of a child forked from this process that entered the evaluating state without a
// limit, started impl and LibTorch and ran a program of a few steps on both; nullopt when the child could not
// say (no /proc, a failed fork).
std::optional<std::size_t> startup_address_space();

}  // namespace parity::engine
