#include "engine/worker_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/worker_protocol.h"
#include "program/internal_assert.h"

namespace parity::engine {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)));
}

WorkerPool::WorkerPool(const WorkerOptions& options)
    : options_(options), slots_(map_shared_progress(std::max(options.workers, 1))) {
  if (options_.workers < 1) throw EvaluationError("a worker pool needs at least one worker");
  workers_.resize(static_cast<std::size_t>(options_.workers));
  for (std::size_t i = 0; i < workers_.size(); ++i) workers_[i].progress = &slots_[i];
}

WorkerPool::~WorkerPool() {
  for (auto& w : workers_) kill(w);
}

void WorkerPool::start(Worker& w) {
  const pid_t parent = ::getpid();
  const WorkerSocket s = fork_with_socket();
  if (s.pid == 0) {
    // The other workers' sockets are the parent's business: holding them would keep them open after the
    // parent closes its ends.
    for (const auto& other : workers_)
      if (other.fd >= 0) ::close(other.fd);
    serve_requests(s.fd, parent, options_.eval.memory_limit_bytes, options_.eval.oracle, w.progress,
                   options_.eval.sides);
  }
  w.progress->reset();
  ::fcntl(s.fd, F_SETFL, ::fcntl(s.fd, F_GETFL) | O_NONBLOCK);
  w.pid = s.pid;
  w.fd = s.fd;
  w.answer.clear();
  ++started_;
}

void WorkerPool::kill(Worker& w) {
  if (w.pid > 0) {
    ::kill(w.pid, SIGKILL);
    while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (w.fd >= 0) ::close(w.fd);
  w.pid = -1;
  w.fd = -1;
  w.answer.clear();
}

WorkerPool::Ticket WorkerPool::submit(program::Program program, bool want_traces) {
  const Ticket t = next_ticket_++;
  queue_.push_back({t, std::move(program), want_traces});
  return t;
}

WorkerPool::Ticket WorkerPool::submit(const GeneratedCase& c) {
  const Ticket t = next_ticket_++;
  queue_.push_back({t, c, false});
  return t;
}

void WorkerPool::send(Worker& w, std::vector<Job> jobs) {
  std::string requests;
  for (const Job& job : jobs) requests += frame(request_body(job.what, job.want_traces));
  // A worker can die while idle (killed from outside): it is replaced, and the requests go to the new one.
  for (int attempt = 0;; ++attempt) {
    if (w.pid < 0) start(w);
    std::string_view rest = requests;
    bool sent = true;
    while (!rest.empty()) {
      const ssize_t r = ::send(w.fd, rest.data(), rest.size(), MSG_NOSIGNAL);
      if (r >= 0) {
        rest.remove_prefix(static_cast<std::size_t>(r));
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd p{w.fd, POLLOUT, 0};
        ::poll(&p, 1, 100);
      } else if (errno != EINTR) {
        sent = false;
        break;
      }
    }
    if (sent) break;
    if (!w.jobs.empty()) {
      // It died running an earlier job, whose end wait() reads from the socket; these go to another worker.
      for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) queue_.push_front(std::move(*it));
      return;
    }
    kill(w);
    if (attempt == 1) throw EvaluationError(std::string("cannot send cases to a new worker: ") + std::strerror(errno));
  }
  if (w.jobs.empty()) w.deadline = Clock::now() + options_.eval.timeout;
  for (Job& job : jobs) w.jobs.push_back(std::move(job));
  running_ += jobs.size();
}

void WorkerPool::dispatch() {
  // An idle worker first gets one job, so that a short queue is spread over every worker; a busy one is topped up
  // only once it has used half of what it holds, so that one message and one wake-up serve several cases.
  for (std::size_t depth : {std::size_t{1}, kJobsPerWorker})
    for (auto& w : workers_) {
      if (queue_.empty()) return;
      if (depth > 1 && w.jobs.size() > kJobsPerWorker / 2) continue;
      std::vector<Job> jobs;
      while (w.jobs.size() + jobs.size() < depth && !queue_.empty()) {
        jobs.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (!jobs.empty()) send(w, std::move(jobs));
    }
}

void WorkerPool::end_job(Worker& w, const ChildEnd& end, bool worker_lives) {
  PARITY_HARNESS_ASSERT(!w.jobs.empty(), "a worker's job ended while it had none");
  Job job = std::move(w.jobs.front());
  w.jobs.pop_front();
  --running_;
  // A worker that died or hung did so in its running job, the front one: its slot describes that job.
  Evaluation e = evaluation_from_end(end, std::get_if<program::Program>(&job.what), options_.eval, *w.progress);
  if (!worker_lives) {
    kill(w);
    while (!w.jobs.empty()) {
      queue_.push_front(std::move(w.jobs.back()));
      w.jobs.pop_back();
      --running_;
    }
  }
  if (!w.jobs.empty()) w.deadline = Clock::now() + options_.eval.timeout;
  finished_.push_back({job.ticket, std::move(e)});
}

bool WorkerPool::read_from(Worker& w) {
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
    if (n > 0) {
      w.answer.append(chunk, static_cast<std::size_t>(n));
      // A short read took all there was: the next poll says when there is more (and whether the worker closed
      // its end), which saves a read that would only say EAGAIN.
      if (static_cast<std::size_t>(n) < sizeof chunk) return true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    return false;  // ECONNRESET and the like: the worker is gone
  }
}

void WorkerPool::interrupt_all() {
  ChildEnd interrupted;
  interrupted.how = ChildEnd::How::Interrupted;
  for (auto& w : workers_)
    if (!w.jobs.empty()) end_job(w, interrupted, false);
  for (auto& job : queue_) {
    Evaluation e;
    e.outcome = Evaluation::Outcome::Interrupted;
    finished_.push_back({job.ticket, std::move(e)});
  }
  queue_.clear();
}

std::optional<WorkerPool::Done> WorkerPool::wait() {
  for (;;) {
    if (!finished_.empty()) {
      Done d = std::move(finished_.front());
      finished_.pop_front();
      return d;
    }
    if (options_.eval.stop && options_.eval.stop->load()) {
      interrupt_all();
      if (finished_.empty()) return std::nullopt;
      continue;
    }
    dispatch();
    if (running_ == 0) return std::nullopt;

    std::vector<pollfd> polls;
    std::vector<Worker*> polled;
    auto next_deadline = Clock::time_point::max();
    for (auto& w : workers_) {
      if (w.jobs.empty()) continue;
      polls.push_back({w.fd, POLLIN, 0});
      polled.push_back(&w);
      next_deadline = std::min(next_deadline, w.deadline);
    }
    // Short slices, so an interrupt is noticed even when no signal reaches poll.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - Clock::now()).count();
    const int r = ::poll(polls.data(), polls.size(), static_cast<int>(std::clamp<std::int64_t>(left, 0, 100)));
    if (r < 0 && errno != EINTR) throw EvaluationError(std::string("poll failed: ") + std::strerror(errno));

    for (std::size_t i = 0; r > 0 && i < polls.size(); ++i) {
      Worker& w = *polled[i];
      if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const bool open = read_from(w);
      // The answers that arrived, in the order the jobs were sent.
      while (!w.jobs.empty()) {
        auto f = complete_frame(w.answer);
        if (!f) break;
        w.answer.erase(0, f->size());
        ChildEnd end;
        end.output = std::move(f->body);
        // After its last answer the worker exits: the jobs it still held go back to the queue.
        end_job(w, end, !f->last);
        if (f->last) break;
      }
      if (open || w.jobs.empty()) {
        if (!open) kill(w);  // it closed its end after its last answer: replaced when next needed
        continue;
      }
      // The worker closed its end without a whole answer: it died. How it ended says why.
      int status = 0;
      while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      w.pid = -1;
      ChildEnd end = ChildEnd::died(status);
      // A worker killed while the run is being stopped was killed by the interrupt, not by its own fault.
      if (options_.eval.stop && options_.eval.stop->load()) end.how = ChildEnd::How::Interrupted;
      end_job(w, end, false);
    }

    const auto now = Clock::now();
    for (auto& w : workers_) {
      if (w.jobs.empty() || now < w.deadline) continue;
      ChildEnd end;
      end.how = ChildEnd::How::Timeout;
      end_job(w, end, false);
    }
  }
}

}  // namespace parity::engine
