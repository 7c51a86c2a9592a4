#include "files/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "files/error.h"
#include "files/file_type.h"
#include "program/splitmix.h"

namespace parity::files {

namespace {

namespace fs = std::filesystem;

// A staging folder is named .OUT.parity- and mkdtemp's random characters.
constexpr std::string_view kStagingMark = ".parity-";
constexpr std::size_t kMkdtempRandom = 6;

[[noreturn]] void fail_errno(const fs::path& path, const std::string& what) {
  throw FileError(path.string() + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, const fs::path& path, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "cannot write");
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void sync(int fd, const fs::path& path) {
  while (::fsync(fd) != 0)
    if (errno != EINTR) fail_errno(path, "cannot fsync");
}

// A rename is durable once the folder holding the name is synced. Some file systems cannot sync a folder
// (EINVAL): the file itself is synced, which is all they offer.
void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_errno(folder, "cannot open the folder to sync it");
  int rc;
  while ((rc = ::fsync(fd)) != 0 && errno == EINTR) {
  }
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0 && errno != EINVAL) fail_errno(folder, "cannot fsync the folder");
}

// A name no other writer uses, even another parity process writing beside this one.
std::string unique_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const std::uint64_t x = program::splitmix64(now ^ program::splitmix64(static_cast<std::uint64_t>(::getpid())) ^
                                              (counter.fetch_add(1) << 48));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

// The temporary file beside `path`. Not mkstemp: its files are 0600 whatever the umask, and a report or
// run.json is meant to be read by others (CI artifacts); this one gets 0666 less the umask, as any new file.
int create_temporary(const fs::path& path, const std::string& what, fs::path& tmp) {
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  for (int attempt = 0;; ++attempt) {
    tmp = folder / ("." + path.filename().string() + "." + unique_suffix() + ".tmp");
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno == EEXIST && attempt < 16) continue;
    throw FileError(path.string() + ": cannot write " + what + ": " + std::strerror(errno) +
                      " (is its folder there and writable?)");
  }
}

}  // namespace

void write_text_file_atomically(const fs::path& path, std::string_view text, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      throw FileError(path.string() + ": will not write " + what + " there: it is " +
                        std::string(file_type_name(st.st_mode)) +
                        ", and parity replaces only regular files (remove it, or give another path)");
  } else if (errno != ENOENT) {
    fail_errno(path, "cannot write " + what);
  }
  fs::path tmp;
  const int fd = create_temporary(path, what, tmp);
  try {
    write_all(fd, tmp, text);
    sync(fd, tmp);
  } catch (const FileError& e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw FileError(path.string() + ": cannot write " + what + " (disk full?): " + e.what());
  }
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw FileError(path.string() + ": cannot write " + what + ": " + why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw FileError(path.string() + ": cannot write " + what + ": " + why);
  }
  sync_folder(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

AppendFile::AppendFile(fs::path path) : path_(std::move(path)) {
  // O_NONBLOCK: opening what fstat is about to refuse must not wait (a FIFO, a serial line waiting for its
  // carrier); it changes nothing for a regular file.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
  if (fd_ < 0) {
    if (errno == ELOOP)
      throw FileError(path_.string() + ": will not append there: it is a symbolic link, and parity writes only "
                        "regular files (remove it, or write elsewhere)");
    if (errno == EISDIR)
      throw FileError(path_.string() + ": will not append there: it is a folder (remove it, or write elsewhere)");
    fail_errno(path_, "cannot open for appending");
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    fail_errno(path_, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw FileError(path_.string() + ": will not append there: it is " + std::string(file_type_name(st.st_mode)) +
                      ", and parity writes only regular files (remove it, or write elsewhere)");
  }
  // The file may have just been created: its name must be on disk for its first record to be.
  try {
    sync_folder(path_.has_parent_path() ? path_.parent_path() : fs::path("."));
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(std::string_view data) {
  write_all(fd_, path_, data);
  sync(fd_, path_);
}

StagedFolder::StagedFolder(fs::path out) : out_(std::move(out)) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(out_, ec);
  if (fs::exists(st) && !(fs::is_directory(st) && fs::is_empty(out_, ec)))
    throw FileError(out_.string() + ": will not write there: it " +
                      (fs::is_directory(st) ? std::string("is a folder that is not empty") : "exists and is not a folder") +
                      " (give a new or empty folder)");
  const fs::path parent = hidden_beside(out_, "").parent_path();
  fs::create_directories(parent, ec);
  std::string tmpl = hidden_beside(out_, std::string(kStagingMark) + std::string(kMkdtempRandom, 'X')).string();
  if (!::mkdtemp(tmpl.data())) fail_errno(parent, "cannot create a folder to write " + out_.string() + " in");
  staged_ = tmpl;
  // mkdtemp's folder is 0700; the published one is read by others (CI artifacts), as any new folder would be.
  const mode_t umask = ::umask(0);
  ::umask(umask);
  ::chmod(staged_.c_str(), 0777 & ~umask);
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  if (!published_) fs::remove_all(staged_, ec);
}

void StagedFolder::publish() {
  // The files in it are synced one by one as written; the folder's own entries must be on disk before it is
  // renamed, and the rename must be on disk before publish returns.
  sync_folder(staged_);
  if (::rename(staged_.c_str(), out_.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST)
      throw FileError(out_.string() + ": will not write there: something was written into it meanwhile");
    fail_errno(out_, "cannot move the written folder into place");
  }
  published_ = true;
  sync_folder(out_.has_parent_path() ? out_.parent_path() : fs::path("."));
}

fs::path hidden_beside(const fs::path& out, std::string_view suffix) {
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  const std::string name = out.filename().empty() ? out.parent_path().filename().string() : out.filename().string();
  return parent / ("." + name + std::string(suffix));
}

std::size_t remove_leftover_staging(const fs::path& out) {
  const fs::path staging = hidden_beside(out, kStagingMark);
  const std::string prefix = staging.filename().string();
  std::size_t removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(staging.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with(prefix) || name.size() != prefix.size() + kMkdtempRandom) continue;
    if (!fs::is_directory(e.symlink_status(ec))) continue;  // a link of that name is left as it is
    std::error_code rm;
    fs::remove_all(e.path(), rm);
    if (rm) throw FileError(e.path().string() + ": cannot remove what a killed writer left: " + rm.message());
    ++removed;
  }
  return removed;
}

void refuse_output_over_input(const fs::path& out, const std::vector<fs::path>& inputs, std::string_view option) {
  struct stat o {};
  const bool out_exists = ::stat(out.c_str(), &o) == 0;
  for (const fs::path& in : inputs) {
    struct stat i {};
    const bool in_exists = ::stat(in.c_str(), &i) == 0;
    bool same = false;
    if (out_exists && in_exists) {
      same = o.st_dev == i.st_dev && o.st_ino == i.st_ino;
    } else if (!out_exists && !in_exists) {
      std::error_code ec1, ec2;
      same = fs::weakly_canonical(out, ec1) == fs::weakly_canonical(in, ec2) && !ec1 && !ec2;
    }
    if (same)
      throw FileError(std::string(option) + " " + out.string() + " is " + in.string() +
                        ", an input of this command: write the output elsewhere");
  }
}

}  // namespace parity::files
