// files/folder_lock.h: one writer per folder, however the first one ends.
#include "files/folder_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "files/error.h"
#include "files/output_file.h"
#include "tests/support/temp_dir.h"

namespace parity::files {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A child process that takes `take`'s lock, says so through a pipe, and holds it until killed.
class Holder {
 public:
  template <class Take>
  explicit Holder(Take take) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      try {
        auto lock = take();
        char c = 'y';
        if (::write(fds[1], &c, 1) != 1) ::_exit(2);
        ::pause();
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    char c = 0;
    held_ = ::read(fds[0], &c, 1) == 1;
    ::close(fds[0]);
  }
  bool held() const { return held_; }
  // SIGKILL: no destructor runs, the kernel alone lets the lock go.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  ~Holder() { kill(); }

 private:
  pid_t pid_ = -1;
  bool held_ = false;
};

void expect_in_use(const auto& take, const fs::path& named) {
  try {
    take();
    ADD_FAILURE() << "a second writer got the lock";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(named.string()), std::string::npos) << e.what();
  }
}

TEST(FolderLock, ASecondWriterIsRefusedUntilTheFirstIsKilled) {
  TempDir dir;
  const fs::path out = dir.path() / "campaign";
  auto take = [&] { return FolderLock::of_folder(out, true); };
  Holder first(take);
  ASSERT_TRUE(first.held());
  expect_in_use(take, out);
  first.kill();
  EXPECT_NO_THROW(take());
}

TEST(FolderLock, ReleasedWhenDestroyed) {
  TempDir dir;
  { const FolderLock lock = FolderLock::of_folder(dir.path(), false); }
  Holder next([&] { return FolderLock::of_folder(dir.path(), false); });
  EXPECT_TRUE(next.held());
}

TEST(FolderLock, AFolderThatIsNotThereIsNotMadeUnlessAsked) {
  TempDir dir;
  EXPECT_THROW(FolderLock::of_folder(dir.path() / "absent", false), FileError);
  EXPECT_FALSE(fs::exists(dir.path() / "absent"));
}

TEST(FolderLock, BesideAnOutputItLeavesNothingOnceReleased) {
  TempDir dir;
  const fs::path out = dir.path() / "merged";
  auto take = [&] { return FolderLock::beside(out); };
  {
    Holder first(take);
    ASSERT_TRUE(first.held());
    expect_in_use(take, out);
  }
  { const FolderLock lock = take(); }
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the lock file stays after its last holder";
}

TEST(FolderLock, LeftoverStagingIsRemovedAndNothingElse) {
  TempDir dir;
  const fs::path out = dir.path() / "merged";
  fs::create_directory(dir.path() / ".merged.parity-abc123");  // as a merge killed before publishing leaves it
  fs::create_directory(dir.path() / ".merged.parity-abc123-not-staging");
  fs::create_directory(dir.path() / ".other.parity-abc123");
  fs::create_directory_symlink(dir.path() / ".other.parity-abc123", dir.path() / ".merged.parity-link12");
  EXPECT_EQ(remove_leftover_staging(out), 1u);
  EXPECT_FALSE(fs::exists(dir.path() / ".merged.parity-abc123"));
  EXPECT_TRUE(fs::exists(dir.path() / ".merged.parity-abc123-not-staging"));
  EXPECT_TRUE(fs::exists(dir.path() / ".other.parity-abc123"));
  EXPECT_TRUE(fs::is_symlink(dir.path() / ".merged.parity-link12"));
}

}  // namespace
}  // namespace parity::files
