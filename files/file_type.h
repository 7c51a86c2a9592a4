// What a path is, in words, for messages that refuse it: parity reads and writes regular files only.
#pragma once
#include <sys/stat.h>

#include <string_view>

namespace parity::files {

// "a folder", "a FIFO", "a character device"... for the type bits of a stat's st_mode.
inline std::string_view file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace parity::files
