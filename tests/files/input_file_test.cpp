// files/input_file.h: only a regular file of bounded size is read; a FIFO, a device or a folder is refused
// before a byte is read, without blocking.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "files/error.h"
#include "files/input_file.h"
#include "tests/support/temp_dir.h"

namespace parity::files {
namespace {

namespace fs = std::filesystem;

std::string error_of(const fs::path& path, std::uintmax_t max_bytes = kMaxInputBytes) {
  try {
    read_text_file(path, max_bytes);
  } catch (const FileError& e) {
    return e.what();
  }
  return "(read)";
}

TEST(InputFile, ReadsARegularFileWithinItsLimit) {
  const parity::testing::TempDir tmp("parity-input");
  const fs::path& dir = tmp.path();
  std::ofstream(dir / "a.json") << "{\"a\": 1}";
  EXPECT_EQ(read_text_file(dir / "a.json"), "{\"a\": 1}");
  EXPECT_NE(error_of(dir / "a.json", 4).find("a.json: file is too large (the limit is 4 bytes)"), std::string::npos);
  // A FIFO with no writer: opening it for reading would block, reading it would wait for a writer forever.
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_NE(error_of(dir / "fifo").find("fifo: cannot read: it is a FIFO, not a regular file"), std::string::npos)
      << error_of(dir / "fifo");
  EXPECT_NE(error_of(dir).find("cannot read: it is a folder"), std::string::npos);
  EXPECT_NE(error_of(dir / "missing").find("missing: cannot read: No such file"), std::string::npos);
  fs::remove_all(dir);
}

TEST(InputFile, ADeviceIsRefusedBeforeItIsRead) {
  // /dev/zero never ends: read whole, it would take the memory of the machine.
  EXPECT_NE(error_of("/dev/zero").find("/dev/zero: cannot read: it is a character device"), std::string::npos)
      << error_of("/dev/zero");
}

}  // namespace
}  // namespace parity::files
