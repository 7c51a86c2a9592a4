// One writer per output folder. A campaign, its --resume, a drift and a merge hold an exclusive flock(2) on the
// folder they write for as long as they run, and a second writer is refused with a message rather than mixing
// its findings into the first's. The kernel drops the lock when the process ends, however it ends, so a
// campaign killed with SIGKILL leaves its folder free for --resume: there is no stale lock file to clear.
#pragma once
#include <filesystem>

namespace parity::files {

class FolderLock {
 public:
  // Locks folder `dir` itself (made first when `make` and absent). Throws FileError naming `dir` when another
  // process holds it, or when it cannot be opened.
  static FolderLock of_folder(const std::filesystem::path& dir, bool make);
  // Locks the place a StagedFolder publishes `out` to: a hidden file beside it (.OUT.parity-lock), removed again
  // on release. Holding it, the caller may remove what an earlier writer killed there left behind.
  static FolderLock beside(const std::filesystem::path& out);

  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&&) = delete;
  FolderLock(const FolderLock&) = delete;
  ~FolderLock();

 private:
  FolderLock(int fd, std::filesystem::path remove_on_release) : fd_(fd), remove_(std::move(remove_on_release)) {}
  int fd_ = -1;
  std::filesystem::path remove_;  // the lock file of beside(); empty for a folder
};

// How long a writer waits for a folder's lock before refusing: a campaign killed a moment ago may still have
// children that have not yet died with it (they hold its descriptors until then).
inline constexpr int kFolderLockWaitMs = 2000;

}  // namespace parity::files
