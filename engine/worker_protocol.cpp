#include "engine/worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/isolation.h"
#include "impl_backend/backend.h"
#include "judge/trace_json.h"
#include "program/internal_assert.h"
#include "program/json.h"
#include "program/json_text.h"

namespace parity::engine {

namespace {

// The worker's side reads requests through a buffer: the parent sends several at once.
class RequestReader {
 public:
  explicit RequestReader(int fd) : fd_(fd) {}
  // The next request's body; nullopt when the parent has gone.
  std::optional<std::string> next() {
    for (;;) {
      if (auto f = complete_frame(buffer_)) {
        buffer_.erase(0, f->size());
        return std::move(f->body);
      }
      char chunk[1 << 16];
      const ssize_t r = ::read(fd_, chunk, sizeof chunk);
      if (r == 0) return std::nullopt;
      if (r < 0) {
        if (errno == EINTR) continue;
        return std::nullopt;
      }
      buffer_.append(chunk, static_cast<std::size_t>(r));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

// A case's selection (generators/selection.h) as two words: the ops as a '0'/'1' per op of the table and the dtypes
// as a '0'/'1' per program::DType value, each "*" for every one.
std::string selection_words(const generators::Selection& s) {
  std::string ops = s.ops.empty() ? "*" : "", dtypes = s.dtypes.empty() ? "*" : "";
  for (bool b : s.ops) ops += b ? '1' : '0';
  if (!s.dtypes.empty())
    for (program::DType d : program::kAllDTypes) {
      const auto v = static_cast<std::size_t>(d);
      if (dtypes.size() <= v) dtypes.resize(v + 1, '0');
      if (std::find(s.dtypes.begin(), s.dtypes.end(), d) != s.dtypes.end()) dtypes[v] = '1';
    }
  return ops + ' ' + dtypes;
}

void read_selection(std::string_view body, generators::Selection& s) {
  const std::size_t space = body.find(' ');
  if (space == std::string_view::npos) throw std::runtime_error("a garbled case request (no selection)");
  const std::string_view ops = body.substr(0, space), dtypes = body.substr(space + 1);
  if (ops != "*") {
    if (ops.size() != program::op_table().size()) throw std::runtime_error("a garbled case request (ops)");
    for (char c : ops) s.ops.push_back(c == '1');
  }
  if (dtypes != "*")
    for (program::DType d : program::kAllDTypes) {
      const auto v = static_cast<std::size_t>(d);
      if (v >= dtypes.size()) throw std::runtime_error("a garbled case request (dtypes)");
      if (dtypes[v] == '1') s.dtypes.push_back(d);
    }
}

// The case a 'C' request names. Throws std::runtime_error when it is garbled.
GeneratedCase read_case(std::string_view body) {
  GeneratedCase c;
  auto field = [&](auto& value) {
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc()) throw std::runtime_error("a garbled case request");
    body.remove_prefix(static_cast<std::size_t>(end - body.data()));
    if (!body.empty() && body.front() == ' ') body.remove_prefix(1);
  };
  field(c.seed);
  field(c.k);
  field(c.config.max_steps);
  field(c.config.invalid_share);
  int cuda = 0;
  field(cuda);
  c.config.cuda = cuda != 0;
  read_selection(body, c.config.selection);
  return c;
}

program::Program read_request(const std::string& request) {
  if (request.size() < 2 || (request[0] != 'P' && request[0] != 'C' && request[0] != 'T'))
    throw std::runtime_error("a request without its kind and flag");
  const std::string_view body = std::string_view(request).substr(2);
  if (request[0] != 'C') return program::program_from_json(program::parse_json_text(body, "a request"));
  const GeneratedCase c = read_case(body);
  return generate_case(c.seed, c.k, c.config).value();
}

}  // namespace

namespace {
constexpr std::uint64_t kLastBit = std::uint64_t{1} << 63;
}  // namespace

std::string frame(std::string_view body, bool last) {
  std::string out(kFrameHeader, '\0');
  const std::uint64_t n = body.size() | (last ? kLastBit : 0);
  std::memcpy(out.data(), &n, kFrameHeader);
  out.append(body);
  return out;
}

std::optional<Frame> complete_frame(const std::string& buffer) {
  if (buffer.size() < kFrameHeader) return std::nullopt;
  std::uint64_t n = 0;
  std::memcpy(&n, buffer.data(), kFrameHeader);
  const bool last = (n & kLastBit) != 0;
  n &= ~kLastBit;
  if (buffer.size() - kFrameHeader < n) return std::nullopt;
  return Frame{buffer.substr(kFrameHeader, n), last};
}

WorkerSocket fork_with_socket() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw EvaluationError(std::string("cannot create a socket pair for a worker: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw EvaluationError(std::string("cannot fork a worker: ") + std::strerror(errno));
  }
  ::close(fds[pid == 0 ? 0 : 1]);
  return {pid, fds[pid == 0 ? 1 : 0]};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t r = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(r));
  }
  return true;
}

std::string request_body(const std::variant<program::Program, GeneratedCase>& what, bool want_traces) {
  const char flag = want_traces ? '1' : '0';
  if (const auto* p = std::get_if<program::Program>(&what)) return std::string{'P', flag} + program::to_json(*p).dump();
  const auto& c = std::get<GeneratedCase>(what);
  char share[64];
  const auto [end, ec] = std::to_chars(share, share + sizeof share, c.config.invalid_share);
  PARITY_HARNESS_ASSERT(ec == std::errc(), "a double does not fit 64 characters");
  return std::string{'C', flag} + std::to_string(c.seed) + ' ' + std::to_string(c.k) + ' ' +
         std::to_string(c.config.max_steps) + ' ' + std::string(share, end) + ' ' + (c.config.cuda ? '1' : '0') +
         ' ' + selection_words(c.config.selection);
}

std::string oracle_trace_request(const program::Program& program) {
  return std::string{'T', '1'} + program::to_json(program).dump();
}

[[noreturn]] void serve_requests(int fd, pid_t parent, std::size_t memory_limit_bytes, reports::Oracle oracle,
                                 Progress* progress, const EvalSides& sides) {
  become_isolated_child(parent);
  enter_evaluating_process(memory_limit_bytes, progress);
  try {
    RequestReader requests(fd);
    for (;;) {
      std::optional<std::string> next = requests.next();
      if (!next) ::_exit(0);
      const std::string& request = *next;
      progress->reset();  // this job's phase, step and memory from here on
      std::string answer;
      bool last = false;
      try {
        const program::Program program = read_request(request);
        answer = request[0] == 'T' ? oracle_trace_to_text(program, *progress)
                                   : evaluate_to_text(program, request[1] == '1',
                                                      judge::KeepValues::SummariseLarge, oracle, sides, *progress);
        last = program::uses_cuda(program) && !impl_backend::cuda_context_usable();
      } catch (const std::exception& e) {
        answer = nlohmann::json{{"fatal", std::string("a worker could not read or generate its case: ") + e.what()}}.dump();
      }
      if (!write_all(fd, frame(answer, last)) || last) ::_exit(0);
    }
  } catch (...) {
    ::_exit(2);
  }
}


}  // namespace parity::engine
