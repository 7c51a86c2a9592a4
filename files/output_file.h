// Files parity writes (run.json, findings.jsonl, report.html, a merge's outputs): only a regular file or a new
// one is written, never through a symbolic link, into a device or a FIFO, nor over an input of the same command;
// and what is written is on disk when the call returns, so a crash or a kill loses nothing already reported.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace parity::files {

// Replaces `path` by a file holding `text`: written to a new file of a unique name beside it (created with
// O_EXCL, so nothing that is there already, a link included, is followed or reused), fsynced, renamed over
// `path`, then the folder fsynced, so that `path` is the old file or the new one whatever happens. Refuses a
// `path` that exists and is not a regular file. `what` names the content in messages ("the run summary").
// Throws FileError naming the path; the temporary file is removed on failure.
void write_text_file_atomically(const std::filesystem::path& path, std::string_view text, const std::string& what);

// A file records are appended to: created if absent, opened without following a symbolic link and refused
// unless it is a regular file (opened without blocking, so that a FIFO is refused rather than waited on).
class AppendFile {
 public:
  explicit AppendFile(std::filesystem::path path);  // throws FileError
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Writes `data` with one write call (O_APPEND: concurrent appenders never interleave within it) and fsyncs,
  // so it is on disk when this returns. Throws FileError.
  void append(std::string_view data);
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// A folder of outputs that appears whole or not at all (a merge's run.json and findings.jsonl: a kill between
// the two files must not leave half a run). Its files are written into a new hidden folder beside `out`, which
// publish() renames to `out` in one step; `out` must be absent or an empty folder. Destroyed unpublished (an
// error), the hidden folder is removed; a kill leaves it (named .OUT.parity-XXXXXX), and never a partial `out`.
class StagedFolder {
 public:
  explicit StagedFolder(std::filesystem::path out);  // throws FileError
  ~StagedFolder();
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Where to write the folder's files until publish().
  const std::filesystem::path& path() const { return staged_; }
  // Renames the staged folder to `out` (replacing it if it is an empty folder) and syncs what holds it.
  // Throws FileError, naming `out`, when `out` has gained content meanwhile or the rename fails.
  void publish();

 private:
  std::filesystem::path out_;
  std::filesystem::path staged_;
  bool published_ = false;
};

// PARENT/.NAME<suffix> for `out` = PARENT/NAME (a trailing slash names NAME too): where parity keeps what is about
// `out` but not in it, its staging folders and the lock beside it (files/folder_lock.h).
std::filesystem::path hidden_beside(const std::filesystem::path& out, std::string_view suffix);

// Removes the hidden folders StagedFolder(out) leaves when its writer is killed before publish(); returns how many.
// Only a caller holding FolderLock::beside(out) (files/folder_lock.h) may: another writer's would be taken from
// under it. Throws FileError.
std::size_t remove_leftover_staging(const std::filesystem::path& out);

// Refuses an output `out` that is one of the command's `inputs`: the same file (device and inode) where both
// exist, the same path where neither does. `option` names the flag in the message ("-o"). Throws FileError.
void refuse_output_over_input(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
                              std::string_view option);

}  // namespace parity::files
