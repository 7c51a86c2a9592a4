#include "files/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "files/error.h"
#include "files/output_file.h"

namespace parity::files {

namespace fs = std::filesystem;

namespace {

constexpr int kPollMs = 50;

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw FileError(path.string() + ": " + what + ": " + std::strerror(errno));
}

// Takes the lock on `fd`, waiting up to kFolderLockWaitMs; false when another process still holds it.
bool lock(int fd, const fs::path& path) {
  for (int waited = 0;; waited += kPollMs) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) fail(path, "cannot lock it");
    if (waited >= kFolderLockWaitMs) return false;
    ::usleep(kPollMs * 1000);
  }
}

[[noreturn]] void in_use(const fs::path& where) {
  throw FileError(where.string() +
                  ": in use: another parity process (a campaign, its --resume, a drift or a merge) is writing there; "
                  "wait for it to end, or write elsewhere");
}

}  // namespace

FolderLock FolderLock::of_folder(const fs::path& dir, bool make) {
  std::error_code ec;
  if (make) fs::create_directories(dir, ec);
  // A link to a folder locks that folder: the files in it are each opened without following links.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(dir, "cannot open the folder to lock it");
  if (!lock(fd, dir)) {
    ::close(fd);
    in_use(dir);
  }
  return FolderLock(fd, {});
}

FolderLock FolderLock::beside(const fs::path& out) {
  const fs::path file = hidden_beside(out, ".parity-lock");
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  for (;;) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) fail(file, "cannot create the lock file");
    if (!lock(fd, file)) {
      ::close(fd);
      in_use(out);
    }
    // The holder before us removes the file when it is done: a lock on a file no longer at that name locks
    // nothing another writer can see, so take the one that is there now.
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(file.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return FolderLock(fd, file);
    ::close(fd);
  }
}

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(other.fd_), remove_(std::move(other.remove_)) {
  other.fd_ = -1;
  other.remove_.clear();
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  // Removed while still held: a writer waiting on this file gets its lock once it is closed, sees that the name
  // no longer leads to it, and makes a new one (beside()).
  if (!remove_.empty()) ::unlink(remove_.c_str());
  ::close(fd_);
}

}  // namespace parity::files
