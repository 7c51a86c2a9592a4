#include "reports/jsonl.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "files/input_file.h"
#include "program/json_text.h"
#include "reports/error.h"

namespace parity::reports {

namespace {

[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what) {
  throw ReportError(path.string() + ": " + what + ": " + std::strerror(errno));
}

// Cuts the file back to just after its last newline: a partial record was never reported.
void cut_torn_tail(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail_errno(path, "cannot stat");
  off_t end = st.st_size;
  char buf[4096];
  while (end > 0) {
    off_t start = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
    ssize_t n = ::pread(fd, buf, static_cast<std::size_t>(end - start), start);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "cannot read");
    }
    for (ssize_t i = n - 1; i >= 0; --i)
      if (buf[i] == '\n') {
        off_t keep = start + i + 1;
        if (keep != st.st_size && ::ftruncate(fd, keep) != 0) fail_errno(path, "cannot truncate a torn last line");
        return;
      }
    end = start;
  }
  if (st.st_size != 0 && ::ftruncate(fd, 0) != 0) fail_errno(path, "cannot truncate a torn last line");
}

const std::filesystem::path& with_parent_folders(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw ReportError(path.parent_path().string() + ": cannot create folder: " + ec.message());
  return path;
}

std::string line_of(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

JsonlWriter::JsonlWriter(const std::filesystem::path& path) : file_(with_parent_folders(path)) {
  cut_torn_tail(file_.fd(), file_.path());
}

void JsonlWriter::append(const nlohmann::json& record) {
  // One write per record: with O_APPEND, concurrent writers (shards sharing a folder) never interleave lines.
  file_.append(line_of(record));
}

void JsonlWriter::append_all(const std::vector<nlohmann::json>& records) {
  std::string lines;
  for (const auto& r : records) lines += line_of(r);
  if (!lines.empty()) file_.append(lines);
}

JsonlContents read_jsonl(const std::filesystem::path& path, Malformed malformed) {
  return parse_jsonl(files::read_text_file(path), path.string(), malformed);
}

JsonlContents parse_jsonl(std::string_view text, const std::string& origin, Malformed malformed) {
  JsonlContents out;
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      out.records.push_back(program::parse_json_text(line, origin, line_no));
      out.lines.push_back(line_no);
    } catch (const program::JsonError& e) {
      // A record and its newline are written at once, so only a write cut short leaves a line without one.
      if (nl == std::string_view::npos) {
        out.torn_tail = true;
        break;
      }
      if (malformed == Malformed::Refuse) throw ReportError(e.what());
      out.malformed.push_back(e.what());
    }
  }
  return out;
}

}  // namespace parity::reports
