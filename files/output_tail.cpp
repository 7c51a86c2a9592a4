#include "files/output_tail.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "files/error.h"

namespace parity::files {

OutputTail::OutputTail() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw FileError(std::string("cannot make a pipe for a child's output: ") + std::strerror(errno));
  read_ = fds[0];
  write_ = fds[1];
  ::fcntl(read_, F_SETFL, ::fcntl(read_, F_GETFL) | O_NONBLOCK);
}

OutputTail::~OutputTail() {
  if (read_ >= 0) ::close(read_);
  if (write_ >= 0) ::close(write_);
}

bool OutputTail::redirect_in_child(int fd) const {
  // dup2 clears close-on-exec on the copy: the exec'd program writes to it.
  return ::dup2(write_, fd) >= 0;
}

void OutputTail::close_write_end() {
  if (write_ >= 0) ::close(write_);
  write_ = -1;
}

bool OutputTail::drain() {
  if (read_ < 0) return false;
  char chunk[1 << 14];
  for (;;) {
    const ssize_t n = ::read(read_, chunk, sizeof chunk);
    if (n > 0) {
      tail_.append(chunk, static_cast<std::size_t>(n));
      if (tail_.size() > kOutputTailBytes) {
        dropped_ += tail_.size() - kOutputTailBytes;
        tail_.erase(0, tail_.size() - kOutputTailBytes);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    ::close(read_);  // end of file, or an error: nothing more will come
    read_ = -1;
    return false;
  }
}

std::string OutputTail::final_text() {
  constexpr int kSlices = 10;
  for (int i = 0; i < kSlices && drain(); ++i) {
    pollfd p{read_, POLLIN, 0};
    ::poll(&p, 1, kFinalWaitMs / kSlices);
  }
  return text();
}

std::string OutputTail::text() const {
  if (dropped_ == 0) return tail_;
  return "[" + std::to_string(dropped_) + " bytes before] " + tail_;
}

}  // namespace parity::files
