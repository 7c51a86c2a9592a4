#include "engine/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <utility>
#include <cstring>
#include <string_view>

namespace parity::engine {

namespace {

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the parent is gone or gave up on us
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

[[noreturn]] void child(int fd, pid_t parent, const std::function<std::string()>& work) {
  become_isolated_child(parent);
  // Nothing may unwind out of here: the child is a copy of the parent, and returning would run a second parity.
  try {
    write_all(fd, work());
  } catch (...) {
    ::_exit(2);
  }
  ::close(fd);
  ::_exit(0);  // no atexit handlers, no static destructors of libraries the parent also holds
}

// Reads what the child sends until it closes the pipe, the time limit passes or `stop` turns true, then reaps it.
ChildEnd wait_for(pid_t pid, int fd, std::chrono::milliseconds timeout, const std::atomic<bool>* stop) {
  ChildEnd end;
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char chunk[1 << 16];
  for (;;) {
    if (stop && stop->load()) {
      end.how = ChildEnd::How::Interrupted;
      killed = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      end.how = ChildEnd::How::Timeout;
      killed = true;
      break;
    }
    // Short slices, so an interrupt is noticed even when no signal reaches poll.
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
    if (r < 0 && errno != EINTR) throw EvaluationError(std::string("poll failed: ") + std::strerror(errno));
    if (r <= 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) end.output.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0) break;
    else if (errno != EINTR && errno != EAGAIN) throw EvaluationError(std::string("read failed: ") + std::strerror(errno));
  }
  ::close(fd);
  if (killed) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (killed || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return end;
  ChildEnd died = ChildEnd::died(status);
  // A child killed while the run is being stopped was killed by the interrupt, not by its own fault.
  if (died.how == ChildEnd::How::Signal && stop && stop->load()) died.how = ChildEnd::How::Interrupted;
  died.output = std::move(end.output);
  return died;
}

}  // namespace

void become_isolated_child(pid_t parent) {
  for (int sig : kStopSignals) ::signal(sig, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
  if (::getppid() != parent) ::_exit(1);
}

std::string signal_name(int signal) {
  // The signals POSIX names (and Linux's SIGSTKFLT, SIGPWR), as a table rather than glibc's sigabbrev_np, so
  // the name does not depend on the C library.
  static constexpr std::pair<int, const char*> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},     {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},       {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"},     {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},     {SIGCHLD, "SIGCHLD"},
      {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"},     {SIGTTIN, "SIGTTIN"},
      {SIGTTOU, "SIGTTOU"}, {SIGURG, "SIGURG"},   {SIGXCPU, "SIGXCPU"},     {SIGXFSZ, "SIGXFSZ"},
      {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"}, {SIGSYS, "SIGSYS"},
#ifdef SIGSTKFLT
      {SIGSTKFLT, "SIGSTKFLT"},
#endif
#ifdef SIGPWR
      {SIGPWR, "SIGPWR"},
#endif
  };
  for (const auto& [number, name] : kNames)
    if (number == signal) return name;
  return "SIG" + std::to_string(signal);
}

ChildEnd ChildEnd::died(int wait_status) {
  ChildEnd end;
  if (WIFSIGNALED(wait_status)) {
    end.how = How::Signal;
    end.code = WTERMSIG(wait_status);
  } else {
    end.how = How::Exit;
    end.code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  }
  return end;
}

std::string ChildEnd::describe(std::chrono::milliseconds timeout) const {
  switch (how) {
    case How::Finished: return "finished";
    case How::Timeout: return "no result after " + std::to_string(timeout.count()) + " ms";
    case How::Interrupted: return "interrupted";
    case How::Signal: return "killed by signal " + std::to_string(code) + " (" + ::strsignal(code) + ")";
    case How::Exit: return "exited with status " + std::to_string(code);
  }
  return "?";
}

ChildEnd run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* stop) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw EvaluationError(std::string("cannot create a pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw EvaluationError(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], parent, work);
  }
  ::close(fds[1]);
  try {
    return wait_for(pid, fds[0], timeout, stop);
  } catch (...) {
    // Whatever went wrong in the parent, the child must not outlive the call nor stay a zombie.
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ::close(fds[0]);
    throw;
  }
}

}  // namespace parity::engine
