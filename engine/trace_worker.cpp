#include "engine/trace_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/isolation.h"
#include "engine/worker_protocol.h"
#include "judge/trace_json.h"
#include "program/json.h"
#include "program/json_text.h"

namespace parity::engine {

namespace {
using Clock = std::chrono::steady_clock;
// How often a wait looks at the stop flag.
constexpr int kPollMs = 100;
}  // namespace

TraceWorker::TraceWorker(std::string executable, std::chrono::milliseconds timeout, std::size_t memory_limit_bytes,
                         const std::atomic<bool>* stop)
    : executable_(std::move(executable)), timeout_(timeout), memory_limit_bytes_(memory_limit_bytes), stop_(stop) {
  if (::access(executable_.c_str(), X_OK) != 0)
    throw EvaluationError("cannot run " + executable_ + ": " + std::strerror(errno));
}

TraceWorker::~TraceWorker() { kill(); }

void TraceWorker::start() {
  const std::string memory_mb = std::to_string(memory_limit_bytes_ >> 20);
  std::vector<const char*> argv = {executable_.c_str(), "worker", "--memory-mb", memory_mb.c_str(), nullptr};
  output_.emplace();
  const pid_t parent = ::getpid();
  const WorkerSocket s = fork_with_socket();
  if (s.pid == 0) {
    // Only async-signal-safe calls until exec: this process may have threads (LibTorch's). Its own group, so that
    // killing the group ends whatever it starts; dead with parity, whoever wrote the binary.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // The worker's end becomes its standard input (not close-on-exec once duplicated).
    if (::dup2(s.fd, 0) < 0 || !output_->redirect_in_child(1) || !output_->redirect_in_child(2)) ::_exit(127);
    ::execv(executable_.c_str(), const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  ::setpgid(s.pid, s.pid);  // as the child does: whichever runs first, the group exists before it is killed
  output_->close_write_end();
  ::fcntl(s.fd, F_SETFL, ::fcntl(s.fd, F_GETFL) | O_NONBLOCK);
  pid_ = s.pid;
  fd_ = s.fd;
  buffer_.clear();
}

void TraceWorker::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);  // were it not its group's leader yet
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd_ >= 0) ::close(fd_);
  pid_ = -1;
  fd_ = -1;
  buffer_.clear();
}

void TraceWorker::send(const program::Program& program) {
  if (pid_ < 0) start();
  deadline_ = Clock::now() + timeout_;
  const std::string request = frame(oracle_trace_request(program));
  // The socket is non-blocking: a large program is written as the worker reads it.
  std::string_view rest = request;
  while (!rest.empty()) {
    const ssize_t n = ::send(fd_, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      rest.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return;  // it died: receive() says how
    // A worker printing without end reads no request until its output is read. (poll skips a closed end's -1.)
    pollfd p[2] = {{fd_, POLLOUT, 0}, {output_->read_end(), POLLIN, 0}};
    if (::poll(p, 2, kPollMs) < 0 && errno != EINTR) return;
    output_->drain();
    if (Clock::now() > deadline_) return;
  }
}

std::string TraceAnswer::failure() const {
  if (process.kind == ProcessOutcome::Kind::Answered)
    return trace ? "completed" : "an exception escaped the run loop: " + escaped;
  return process.what + (output.empty() ? "" : "; its output ended with: " + output);
}

std::string TraceWorker::handshake() {
  send(program::Program{});
  TraceAnswer a;
  try {
    a = receive();
  } catch (const EvaluationError& e) {
    throw EvaluationError(executable_ + " is not a parity binary whose `parity worker` answers this one: " + e.what());
  }
  if (!a.trace || version_.empty()) {
    kill();
    throw EvaluationError(executable_ + " is not a parity binary whose `parity worker` answers this one (asked for "
                          "the trace of a program of no step: " + a.failure() + ")");
  }
  return version_;
}

TraceAnswer TraceWorker::receive() {
  TraceAnswer out;
  if (pid_ < 0) {
    out.process.kind = ProcessOutcome::Kind::Crash;
    out.process.what = "the worker is not running";
    return out;
  }
  for (;;) {
    if (auto f = complete_frame(buffer_)) {
      buffer_.erase(0, f->size());
      // Its last answer: it exits now, and the next program starts a fresh one.
      if (f->last) kill();
      nlohmann::json answer;
      try {
        answer = program::parse_json_text(f->body, executable_ + " worker's answer");
      } catch (const std::exception& e) {
        kill();
        throw EvaluationError(executable_ + " worker sent an answer that is not JSON: " + e.what());
      }
      if (answer.contains("fatal")) {
        kill();
        throw EvaluationError(executable_ + " worker: " + answer["fatal"].get<std::string>());
      }
      version_ = answer.value("libtorch_version", version_);
      if (answer.contains("escaped")) {
        out.escaped = answer["escaped"].get<std::string>();
      } else {
        out.trace = judge::trace_from_json(answer.at("trace"));
      }
      return out;
    }
    ChildEnd end;
    if (stop_ && stop_->load()) end.how = ChildEnd::How::Interrupted;
    else if (std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count() <= 0)
      end.how = ChildEnd::How::Timeout;
    if (end.how != ChildEnd::How::Finished) {
      kill();
      out.process = outcome_of(end, false, timeout_, memory_limit_bytes_);
      out.output = output_->final_text();
      return out;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    pollfd p[2] = {{fd_, POLLIN, 0}, {output_->read_end(), POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(std::min<long long>(left, kPollMs))) < 0 && errno != EINTR)
      throw EvaluationError(std::string("cannot wait for a worker: ") + std::strerror(errno));
    output_->drain();
    char chunk[1 << 16];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    // The worker closed its end: it died. How, from its status.
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    ::kill(-pid_, SIGKILL);  // what it started and left running
    pid_ = -1;
    ::close(fd_);
    fd_ = -1;
    buffer_.clear();
    const ChildEnd died = ChildEnd::died(status);
    if (died.how == ChildEnd::How::Exit && died.code == 127)
      throw EvaluationError("cannot run " + executable_ + " worker (exec failed, or it has no `worker` command)");
    out.process = outcome_of(died, false, timeout_, memory_limit_bytes_);
    out.output = output_->final_text();
    return out;
  }
}

}  // namespace parity::engine
