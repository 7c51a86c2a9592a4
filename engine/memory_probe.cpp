#include "engine/memory_probe.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "engine/evaluation_process.h"
#include "program/program_builder.h"

namespace parity::engine {

namespace {

// VmPeak of /proc/self/status, in bytes; 0 when it cannot be read.
std::uint64_t own_peak() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmPeak: %llu kB", &kib) == 1) break;
  std::fclose(f);
  return static_cast<std::uint64_t>(kib) << 10;
}

// What a first case touches: a tensor requiring grad, an op, a reduction and a backward on both backends.
program::Program small_program() {
  program::ProgramBuilder b;
  const int x = b.rand({4, 4}, program::DType::Float32, true);
  const int y = b.step(program::OpId::Mul, {x, x});
  b.backward(b.step(program::OpId::Sum, {y}));
  return b.program();
}

}  // namespace

std::optional<std::size_t> startup_address_space() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const program::Program program = small_program();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (child == 0) {
    ::close(fds[0]);
    static Progress progress;
    enter_evaluating_process(0, &progress);
    evaluate_to_text(program, false, judge::KeepValues::SummariseLarge, reports::Oracle::LibTorch, EvalSides{},
                     progress);
    const std::uint64_t peak = own_peak();
    const bool sent = ::write(fds[1], &peak, sizeof peak) == static_cast<ssize_t>(sizeof peak);
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  std::uint64_t peak = 0;
  ssize_t n;
  while ((n = ::read(fds[0], &peak, sizeof peak)) < 0 && errno == EINTR) {
  }
  ::close(fds[0]);
  while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof peak) || peak == 0) return std::nullopt;
  return static_cast<std::size_t>(peak);
}

}  // namespace parity::engine
