// The messages between a parent and an evaluating worker, and the worker's side of them: a worker forked by
// the campaign's pool (engine/worker_pool.h) and one another parity build runs as `parity worker` for
// `parity drift` (engine/trace_worker.h) speak the same protocol.
//
// A message is its length (8 bytes, this machine's order: both ends run on this machine) and its bytes. A
// request is a kind byte, a flag byte ('1': traces wanted) and the body: for 'P' a program as JSON, for 'C' a
// case to generate as "seed k max_steps invalid_share cuda ops dtypes" (the double in its shortest exact form,
// the selection's ops and dtypes a '0'/'1' each or "*"), for 'T' a
// program as JSON to run on LibTorch alone. The answer to 'P' and 'C' is what evaluate_to_text returned, to 'T'
// what oracle_trace_to_text returned (engine/evaluation_process.h). An answer whose length has its top bit set is
// the worker's last: a sticky CUDA error broke its CUDA context (a device-side assert in LibTorch, say), which
// would fail every later case it ran, so it exits, and the requests it still held go to a fresh worker.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/case_seed.h"
#include "engine/evaluation_process.h"
#include "program/program.h"

namespace parity::engine {

inline constexpr std::size_t kFrameHeader = sizeof(std::uint64_t);

struct Frame {
  std::string body;
  bool last = false;  // the worker's last answer: it exits after sending it
  std::size_t size() const { return kFrameHeader + body.size(); }  // in the buffer it came from
};

std::string frame(std::string_view body, bool last = false);
// The whole frame once `buffer` holds a complete one.
std::optional<Frame> complete_frame(const std::string& buffer);
// Writes all of `data` to a socket; false when the other end has gone.
bool write_all(int fd, std::string_view data);

// A worker process with a socket to it: in the parent {the worker's pid, the parent's end}, in the worker {0, the
// worker's end}, each process having closed the other end. Both ends are close-on-exec. Throws EvaluationError.
struct WorkerSocket {
  pid_t pid;
  int fd;
};
WorkerSocket fork_with_socket();

// A request for a program or a generated case (evaluated on both backends), or for a program's LibTorch trace.
std::string request_body(const std::variant<program::Program, GeneratedCase>& what, bool want_traces);
std::string oracle_trace_request(const program::Program& program);

// A worker's life: requests read from `fd` (a socket), answers written to it, until the other end closes it.
// Nothing may unwind out of here (a forked worker is a copy of its parent: returning would run a second parity),
// and nothing of the parent's is cleaned up on the way out (_exit). `parent`: the process whose death ends the
// worker; `memory_limit_bytes` (0: none) and `progress` as enter_evaluating_process takes them; `oracle` judges
// impl in every 'P' and 'C' request.
[[noreturn]] void serve_requests(int fd, pid_t parent, std::size_t memory_limit_bytes, reports::Oracle oracle,
                                 Progress* progress, const EvalSides& sides = {});

}  // namespace parity::engine
