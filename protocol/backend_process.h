// A backend's process: started from a shell command, spoken to one JSON line at a time over its stdin and stdout
// (docs/backend-protocol.md). The process gets SIGKILL when the process that started it dies (an evaluating
// worker killed for a time limit), and is killed when this object goes, with its process group: what the command
// started goes too. Its stderr is kept, bounded (files/output_tail.h), for the message that says how it ended,
// never passed to parity's terminal.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "files/output_tail.h"

namespace parity::protocol {

class BackendProcess {
 public:
  // Starts `command` with `bash -c` (which execs a simple command, so the signal reaches the backend itself).
  // Throws ProtocolError when it cannot be started.
  explicit BackendProcess(const std::string& command);
  ~BackendProcess();
  BackendProcess(const BackendProcess&) = delete;
  BackendProcess& operator=(const BackendProcess&) = delete;

  // Writes one line (a newline is added). false when the backend has gone.
  bool send(const std::string& line);
  // The next line of its stdout, without the newline; nullopt when it closed stdout (it died) or, with a
  // deadline, when that passed first.
  std::optional<std::string> receive(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
  // Kills it (if still running) and says how it ended: "exited with status 3", "killed by signal 9 (Killed)",
  // then "; its stderr ended with: ..." when it wrote there.
  std::string end();

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;  // its stdin (we write), its stdout (we read)
  files::OutputTail stderr_;
  std::string buffer_;
  std::string ended_;
};

}  // namespace parity::protocol
