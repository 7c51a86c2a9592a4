#include "protocol/backend_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/handshake.h"

namespace parity::protocol {

namespace {

// A line longer than this is no protocol message: a backend that prints without end must not eat the memory.
constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

std::string how_it_ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended (wait status " + std::to_string(status) + ")";
}

}  // namespace

BackendProcess::BackendProcess(const std::string& command) {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) throw ProtocolError(std::string("cannot make a pipe: ") + std::strerror(errno));
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]), ::close(to_child[1]);
    throw ProtocolError(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  // A backend that dies makes our next write fail with EPIPE rather than kill this process.
  ::signal(SIGPIPE, SIG_IGN);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) ::close(fd);
    throw ProtocolError(std::string("cannot fork the backend: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec: the parent may have threads (LibTorch's).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    if (!stderr_.redirect_in_child(2)) ::_exit(127);
    ::signal(SIGPIPE, SIG_DFL);
    ::execl("/bin/bash", "bash", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before it is killed
  ::close(to_child[0]);
  ::close(from_child[1]);
  stderr_.close_write_end();
  pid_ = pid;
  in_ = to_child[1];
  out_ = from_child[0];
}

BackendProcess::~BackendProcess() { end(); }

bool BackendProcess::send(const std::string& line) {
  if (in_ < 0) return false;
  std::string data = line + '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(in_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::string> BackendProcess::receive(std::optional<std::chrono::steady_clock::time_point> deadline) {
  for (;;) {
    if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (out_ < 0 || buffer_.size() > kMaxLineBytes) return std::nullopt;
    // Its stderr is read as it comes too: a backend blocked writing a full pipe would never answer.
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd p[2] = {{out_, POLLIN, 0}, {stderr_.read_end(), POLLIN, 0}};  // poll skips a closed end's -1
    const int ready = ::poll(p, 2, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return std::nullopt;
    if (p[1].revents) stderr_.drain();
    if (!p[0].revents) continue;
    char chunk[65536];
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(out_);
      out_ = -1;
      continue;  // a last line without its newline is no message
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string BackendProcess::end() {
  if (pid_ > 0) {
    int status = 0;
    // It may have ended by itself (give one that closed its stdout a moment to exit); otherwise it is killed: a
    // backend's state after a failure is unknown.
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    for (int i = 0; done == 0 && out_ < 0 && i < 50; ++i) {
      ::usleep(2000);
      done = ::waitpid(pid_, &status, WNOHANG);
    }
    if (done == 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      ended_ = "was killed";
    } else {
      ended_ = how_it_ended(status);
    }
    ::kill(-pid_, SIGKILL);  // what it started, still running or left behind
    if (const std::string err = stderr_.final_text(); !err.empty()) ended_ += "; its stderr ended with: " + err;
    pid_ = -1;
  }
  for (int* fd : {&in_, &out_})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  return ended_;
}

}  // namespace parity::protocol
