// JSON-lines files: one record per line. The writer makes each record durable before returning, so a campaign
// that crashes or is killed loses nothing it already reported; the reader tolerates the one torn line such a
// crash can leave at the end.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "files/output_file.h"

namespace parity::reports {

class JsonlWriter {
 public:
  // Opens for appending (creating the file and its parent folders; a symbolic link, a FIFO, a device or a
  // folder at `path` is refused: see AppendFile). A torn last line left by an earlier crash is cut off, so that
  // the next record starts on a line of its own. Throws ReportError.
  explicit JsonlWriter(const std::filesystem::path& path);
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // Writes one line and fsyncs it. Throws ReportError.
  void append(const nlohmann::json& record);
  // Writes several lines with one write and one fsync (records kept back until a checkpoint). Throws ReportError.
  void append_all(const std::vector<nlohmann::json>& records);
  const std::filesystem::path& path() const { return file_.path(); }

 private:
  files::AppendFile file_;
};

struct JsonlContents {
  std::vector<nlohmann::json> records;
  std::vector<std::size_t> lines;  // the line (from 1) of each record, for messages that point into the file
  bool torn_tail = false;  // the last line was incomplete (no newline ends it) and was skipped
  // With Malformed::Skip: "FILE:LINE:COLUMN: malformed JSON: why" of each other line skipped.
  std::vector<std::string> malformed;
};

// What to do with a malformed line other than the last: refuse the file, or skip the line and say so (for
// readers that show what they can, like the HTML report).
enum class Malformed { Refuse, Skip };

// Reads every record (read_text_file, program::parse_json_text). Throws ReportError for an unreadable file, or
// (Refuse) a malformed line other than a torn last one, naming the file, line and column.
JsonlContents read_jsonl(const std::filesystem::path& path, Malformed = Malformed::Refuse);
// The same, for text already read; `origin` names it in messages.
JsonlContents parse_jsonl(std::string_view text, const std::string& origin, Malformed = Malformed::Refuse);

}  // namespace parity::reports
