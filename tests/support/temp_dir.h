// A fresh temporary folder for one test, removed with everything in it when the test ends: the one way tests
// make a place to write files.
#pragma once
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace parity::testing {

class TempDir {
 public:
  // A folder named PREFIX-XXXXXX under the system's temporary folder. Throws when it cannot be made, so a test
  // never writes into a folder it did not get.
  explicit TempDir(const std::string& prefix = "parity-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot make a temporary folder " + tmpl + ": " + std::strerror(errno));
    path_ = tmpl;
  }
  // A test may have taken the folder's own permissions away (to see a write refused): they come back first.
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace parity::testing
