// Errors of reading or writing a file: which file and what went wrong, in one line a person can act on.
#pragma once
#include <stdexcept>
#include <string>

namespace parity::files {

struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace parity::files
