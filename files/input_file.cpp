#include "files/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "files/error.h"
#include "files/file_type.h"

namespace parity::files {

namespace {

std::string too_large(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  return path.string() + ": file is too large (the limit is " + std::to_string(max_bytes) +
         " bytes): is it a file parity wrote?";
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path, std::uintmax_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw FileError(path.string() + ": cannot read: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw FileError(path.string() + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw FileError(path.string() + ": cannot read: it is " + std::string(file_type_name(st.st_mode)) +
                      ", not a regular file (give a file, or a copy of one)");
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) throw FileError(too_large(path, max_bytes));
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(path.string() + ": cannot read: " + std::strerror(errno));
    }
    if (n == 0) break;
    // The file may grow while it is read (a campaign appending findings): the limit holds for what is read.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) throw FileError(too_large(path, max_bytes));
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace parity::files
