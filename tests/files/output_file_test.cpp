// files/output_file.h: outputs are regular files or new ones. A symbolic link, a FIFO or a folder where an
// output goes is refused and left as it was, nothing is written through it, and no temporary file stays behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "files/error.h"
#include "files/output_file.h"
#include "reports/jsonl.h"
#include "tests/support/temp_dir.h"

namespace parity::files {

using reports::JsonlWriter;

namespace {

namespace fs = std::filesystem;

class OutputFile : public ::testing::Test {
 protected:
  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const FileError& e) {
      return e.what();
    }
    return "(no error)";
  }
  // Every name in the folder, so that a temporary file left behind shows.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string contents(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  parity::testing::TempDir tmp_{"parity-output"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(OutputFile, ReplacesARegularFileAndLeavesNothingElse) {
  write_text_file_atomically(dir_ / "run.json", "old\n", "the run summary");
  write_text_file_atomically(dir_ / "run.json", "new\n", "the run summary");
  EXPECT_EQ(contents(dir_ / "run.json"), "new\n");
  EXPECT_EQ(names(), std::vector<std::string>{"run.json"});
}

TEST_F(OutputFile, NeverWritesThroughASymbolicLink) {
  fs::create_symlink(dir_ / "victim", dir_ / "run.json");
  const std::string e = error_of([&] { write_text_file_atomically(dir_ / "run.json", "x", "the run summary"); });
  EXPECT_NE(e.find("run.json: will not write the run summary there: it is a symbolic link"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_symlink(dir_ / "run.json"));
  EXPECT_FALSE(fs::exists(dir_ / "victim"));
  EXPECT_EQ(names(), std::vector<std::string>{"run.json"});
}

TEST_F(OutputFile, ALinkWhereTheOldFixedTemporaryNameWasIsIgnored) {
  fs::create_symlink(dir_ / "victim", dir_ / "run.json.tmp");
  write_text_file_atomically(dir_ / "run.json", "x", "the run summary");
  EXPECT_FALSE(fs::exists(dir_ / "victim"));
  EXPECT_FALSE(fs::is_symlink(dir_ / "run.json"));
  EXPECT_EQ(contents(dir_ / "run.json"), "x");
}

TEST_F(OutputFile, AFifoOrAFolderIsRefusedAndKept) {
  ASSERT_EQ(::mkfifo((dir_ / "page.html").c_str(), 0600), 0);
  std::string e = error_of([&] { write_text_file_atomically(dir_ / "page.html", "x", "the report"); });
  EXPECT_NE(e.find("page.html: will not write the report there: it is a FIFO"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_fifo(dir_ / "page.html"));
  fs::create_directory(dir_ / "d");
  e = error_of([&] { write_text_file_atomically(dir_ / "d", "x", "the report"); });
  EXPECT_NE(e.find("it is a folder"), std::string::npos) << e;
  EXPECT_EQ(names(), (std::vector<std::string>{"d", "page.html"}));
}

TEST_F(OutputFile, AFailedWriteLeavesNoTemporaryFile) {
  const std::string e = error_of([&] { write_text_file_atomically(dir_ / "missing" / "run.json", "x", "it"); });
  EXPECT_NE(e.find("is its folder there"), std::string::npos) << e;
  EXPECT_EQ(names(), std::vector<std::string>{});
}

TEST_F(OutputFile, AppendingRefusesLinksFifosAndFolders) {
  fs::create_symlink(dir_ / "outside.jsonl", dir_ / "findings.jsonl");  // dangling: O_CREAT would make it
  std::string e = error_of([&] { JsonlWriter w(dir_ / "findings.jsonl"); });
  EXPECT_NE(e.find("findings.jsonl: will not append there: it is a symbolic link"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir_ / "outside.jsonl"));
  // A FIFO without a reader: refused at once, not waited on.
  ASSERT_EQ(::mkfifo((dir_ / "fifo.jsonl").c_str(), 0600), 0);
  e = error_of([&] { JsonlWriter w(dir_ / "fifo.jsonl"); });
  EXPECT_NE(e.find("fifo.jsonl: will not append there: it is a FIFO"), std::string::npos) << e;
  e = error_of([&] { AppendFile f(dir_); });
  EXPECT_NE(e.find("it is a folder"), std::string::npos) << e;
}

TEST_F(OutputFile, AnOutputMayNotBeAnInput) {
  std::ofstream(dir_ / "findings.jsonl") << "{}\n";
  const fs::path findings = dir_ / "findings.jsonl", run = dir_ / "run.json";
  // The same file by another name: a hard link, a path through "..".
  fs::create_hard_link(findings, dir_ / "alias.jsonl");
  for (const fs::path& out : {findings, dir_ / "alias.jsonl", dir_ / "sub" / ".." / "findings.jsonl"}) {
    fs::create_directories(dir_ / "sub");
    const std::string e = error_of([&] { refuse_output_over_input(out, {run, findings}, "-o"); });
    EXPECT_NE(e.find("-o " + out.string() + " is " + findings.string() + ", an input of this command"),
              std::string::npos) << e;
  }
  // An input that is not there yet is still one, by its path.
  EXPECT_NE(error_of([&] { refuse_output_over_input(run, {run, findings}, "-o"); }).find("an input"), std::string::npos);
  EXPECT_EQ(error_of([&] { refuse_output_over_input(dir_ / "page.html", {run, findings}, "-o"); }), "(no error)");
}

// A staged folder appears whole, in a new or an empty folder, and leaves nothing when it is not published.
TEST_F(OutputFile, AStagedFolderAppearsWholeOrNotAtAll) {
  for (const bool existed_empty : {false, true}) {
    const fs::path out = dir_ / (existed_empty ? "empty" : "new");
    if (existed_empty) fs::create_directory(out);
    StagedFolder staged(out);
    write_text_file_atomically(staged.path() / "a", "1", "a");
    write_text_file_atomically(staged.path() / "b", "2", "b");
    EXPECT_FALSE(fs::exists(out / "a")) << "visible before publish";
    staged.publish();
    EXPECT_TRUE(fs::exists(out / "a") && fs::exists(out / "b"));
  }
  {
    StagedFolder abandoned(dir_ / "abandoned");
    write_text_file_atomically(abandoned.path() / "a", "1", "a");
  }
  EXPECT_FALSE(fs::exists(dir_ / "abandoned"));
  EXPECT_EQ(names(), (std::vector<std::string>{"empty", "new"})) << "a staging folder was left behind";

  std::ofstream(dir_ / "new" / "other") << "x";
  EXPECT_NE(error_of([&] { StagedFolder s(dir_ / "new"); }).find("not empty"), std::string::npos);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_NE(error_of([&] { StagedFolder s(dir_ / "file"); }).find("not a folder"), std::string::npos);
}

}  // namespace
}  // namespace parity::files
