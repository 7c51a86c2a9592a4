// What a child process writes to its stdout and stderr, read from a pipe as it comes and kept bounded: the last
// kOutputTailBytes, and how many came before them. A child running another binary (`parity drift --against`, a
// protocol backend's command) must not write to parity's terminal, whose output is parity's own, nor fill its
// memory by printing without end. What is kept reaches a person only inside parity's messages about the child,
// which escape control characters as every message does.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace parity::files {

inline constexpr std::size_t kOutputTailBytes = 4096;
inline constexpr int kFinalWaitMs = 100;

class OutputTail {
 public:
  OutputTail();  // a pipe, both ends close-on-exec. Throws FileError.
  ~OutputTail();
  OutputTail(const OutputTail&) = delete;
  OutputTail& operator=(const OutputTail&) = delete;

  // In the child, before exec: makes the pipe its descriptor `fd` (1, 2; async-signal-safe). False when it cannot.
  bool redirect_in_child(int fd) const;
  // In the parent, once the child is started: only the child holds the write end now.
  void close_write_end();
  // The end to poll for POLLIN.
  int read_end() const { return read_; }
  // Reads whatever is there without blocking (the read end is non-blocking). False once the pipe is closed at
  // its other end (every child holding it has exited).
  bool drain();
  // "" when the child wrote nothing; else what it wrote last, after "[N bytes before]" when some were dropped.
  std::string text() const;
  // Once the child is dead: drains what is left, waiting up to kFinalWaitMs in all (something that left the
  // child's process group may hold the pipe open), and returns text().
  std::string final_text();

 private:
  int read_ = -1;
  int write_ = -1;
  std::string tail_;
  std::uint64_t dropped_ = 0;
};

}  // namespace parity::files
