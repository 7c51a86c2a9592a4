// Persistent isolated workers: processes forked from this one (which holds no torch state) that each evaluate
// one program at a time, as many as they are sent, instead of a fork per case. What a per-case child gives is
// kept: a worker that crashes, hangs or exceeds the memory limit ends only the case it was running, which gets a
// crash/timeout/out_of_memory evaluation at the step it was in; the worker is replaced before the next case.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/case_seed.h"
#include "engine/evaluate.h"
#include "engine/evaluation_process.h"
#include "program/program.h"

namespace parity::engine {

struct WorkerOptions {
  int workers = 1;
  EvalOptions eval;  // the time limit of one case, the memory limit of a worker, the stop flag
};

// The cores this process may run on (its CPU affinity, which container limits and taskset narrow): the default
// number of workers.
int usable_cores();

class WorkerPool {
 public:
  using Ticket = std::uint64_t;
  struct Done {
    Ticket ticket;
    Evaluation evaluation;
  };

  explicit WorkerPool(const WorkerOptions& options);  // throws EvaluationError
  ~WorkerPool();  // ends the workers
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues a program for the next idle worker (traces in the evaluation when asked or diverging).
  Ticket submit(program::Program program, bool want_traces = false);
  // Queues a campaign's case, which the worker generates: the evaluation's steps name the ops, and the program is
  // the caller's to generate when it needs it (a case that diverged or whose worker died).
  Ticket submit(const GeneratedCase& c);
  // The next job to finish, in whatever order jobs finish; nullopt when none is queued or running. Once `stop`
  // turns true, every job still queued or running ends Interrupted. Throws EvaluationError when a worker cannot
  // be started or answers {"fatal": ...}.
  std::optional<Done> wait();

  std::size_t pending() const { return queue_.size() + running_ + finished_.size(); }
  int size() const { return static_cast<int>(workers_.size()); }
  // Jobs the workers can hold at once: a caller that keeps this many submitted keeps every worker busy.
  std::size_t capacity() const { return workers_.size() * kJobsPerWorker; }
  std::uint64_t workers_started() const { return started_; }  // replacements included

 private:
  struct Job {
    Ticket ticket;
    std::variant<program::Program, GeneratedCase> what;
    bool want_traces;
  };
  struct Worker {
    pid_t pid = -1;
    int fd = -1;  // the parent's end of the socket pair
    Progress* progress = nullptr;
    // The jobs sent to the worker, recorded before their requests are sent: the first is the one it runs (its
    // deadline runs), the others wait in the socket so that the worker never waits for the parent. Whatever
    // happens to the worker, the parent knows which case it was running; those waiting are sent again.
    std::deque<Job> jobs;
    std::chrono::steady_clock::time_point deadline;  // of jobs.front()
    std::string answer;  // what the worker has sent of its answers so far
  };
  // Jobs sent to one worker at a time: enough that the parent's messages and wake-ups are shared by several
  // cases, few enough that the queue is spread over every worker.
  static constexpr std::size_t kJobsPerWorker = 8;

  void start(Worker& w);
  void dispatch();
  void send(Worker& w, std::vector<Job> jobs);  // in one message
  // The worker's running job ends as `end` says. Unless it finished normally the worker is ended first, and the
  // job waiting behind it goes back to the front of the queue.
  void end_job(Worker& w, const ChildEnd& end, bool worker_lives);
  void kill(Worker& w);
  bool read_from(Worker& w);  // false when the worker closed its end (it died)
  void interrupt_all();

  WorkerOptions options_;
  Progress* slots_;
  std::vector<Worker> workers_;
  std::deque<Job> queue_;
  std::deque<Done> finished_;
  std::size_t running_ = 0;
  Ticket next_ticket_ = 0;
  std::uint64_t started_ = 0;
};

}  // namespace parity::engine
