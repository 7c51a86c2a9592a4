// Work that may crash or hang (a backend running a program) runs in a forked child: the child sends its
// result through a pipe, the parent enforces a time limit and notices interrupts. A crash or a hang is then
// an outcome the caller reports, not the end of parity.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

namespace parity::engine {

// The machinery itself failed (fork, pipe, poll, shared memory): not an outcome, a broken setup.
struct EvaluationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ChildEnd {
  enum class How { Finished, Timeout, Interrupted, Signal, Exit };
  How how = How::Finished;
  std::string output;  // what the child wrote (whole only when Finished)
  int code = 0;        // the signal (Signal) or the nonzero exit status (Exit)
  // "killed by signal 11 (Segmentation fault)", "exited with status 3", "no result after 100 ms".
  std::string describe(std::chrono::milliseconds timeout) const;
  // A reaped process that died, from its waitpid status: Signal with the signal, or Exit with the status (-1 when
  // it neither exited nor was signalled). Whether that is a crash, an out-of-memory end or an interrupt is
  // engine/process_outcome.h's to say.
  static ChildEnd died(int wait_status);
};

// The signals that stop a campaign cleanly, its output written and marked interrupted: Ctrl-C, kill's default, a
// closed terminal or ssh session, and the warning batch schedulers send before they kill a job (Slurm's
// --signal=USR1). Any one of them left at its default would end the run with no run.json.
inline constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};

// A signal's name as <signal.h> spells it ("SIGSEGV"), or "SIG" and its number for one without a standard name
// (the real-time signals): what a crash's signature names.
std::string signal_name(int signal);

// The first thing a child forked for isolated work does: the stop signals become the parent's to handle (the child
// dies with the rest of the process group), and the child dies with the parent. Ends the child at once when the
// parent (`parent`, its pid before the fork) is already gone.
void become_isolated_child(pid_t parent);

// Runs `work` in a child process and returns how the child ended with what `work` returned. `work` must not
// throw. The child dies with the parent; `stop`, when it turns true, kills it (Interrupted).
ChildEnd run_isolated(const std::function<std::string()>& work, std::chrono::milliseconds timeout,
                      const std::atomic<bool>* stop = nullptr);

}  // namespace parity::engine
