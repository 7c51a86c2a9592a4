// A worker process of a parity build, possibly another one (another LibTorch), that runs programs on its
// LibTorch alone and answers with the traces (`parity worker`, engine/worker_protocol.h): what `parity drift`
// compares. One program at a time; a worker that crashes, hangs past the time limit or exceeds its memory limit
// ends only that program's run (the answer says how) and is started again for the next. Its process group is killed
// with it, and what it prints is kept (bounded) for the messages about it, never passed to parity's terminal.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/process_outcome.h"
#include "files/output_tail.h"
#include "judge/trace.h"
#include "program/program.h"

namespace parity::engine {

struct TraceAnswer {
  ProcessOutcome process;             // how the worker's turn ended: Answered when it sent an answer
  std::optional<judge::Trace> trace;  // the answer's trace
  std::string escaped;                // an answer without one: the exception that escaped the run loop
  std::string output;                 // without a trace: the end of what the worker wrote (files/output_tail.h)
  // What went wrong, for a person, when there is no trace.
  std::string failure() const;
};

class TraceWorker {
 public:
  // `executable`: a parity binary (this one: /proc/self/exe). Throws EvaluationError when it cannot be run.
  TraceWorker(std::string executable, std::chrono::milliseconds timeout, std::size_t memory_limit_bytes,
              const std::atomic<bool>* stop);
  ~TraceWorker();
  TraceWorker(const TraceWorker&) = delete;
  TraceWorker& operator=(const TraceWorker&) = delete;

  // Starts the worker and asks it for the trace of a program of no step, which any parity worker answers with its
  // LibTorch's version (returned): a binary that is not parity (it exits, hangs, or answers something else) is
  // refused here, before a case is run. Throws EvaluationError saying how it failed.
  std::string handshake();
  // Sends the program (starting the worker first when it is not running); receive() waits for the answer.
  // Throws EvaluationError when the worker cannot be started or answers {"fatal": ...}.
  void send(const program::Program& program);
  TraceAnswer receive();

  const std::string& executable() const { return executable_; }
  // The worker's LibTorch version, once it has answered a program.
  const std::string& libtorch_version() const { return version_; }

 private:
  void start();
  void kill();

  std::string executable_;
  std::chrono::milliseconds timeout_;
  std::size_t memory_limit_bytes_;
  const std::atomic<bool>* stop_;
  // The worker runs in a process group of its own, killed whole: what it started (a script's `sleep`) goes too.
  pid_t pid_ = -1;
  int fd_ = -1;
  std::optional<files::OutputTail> output_;  // its stdout and stderr, never parity's terminal
  std::chrono::steady_clock::time_point deadline_;
  std::string buffer_;
  std::string version_;
};

}  // namespace parity::engine
