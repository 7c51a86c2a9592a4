// `parity report`: the HTML page of a campaign's output folder, for a person to triage.
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "files/error.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "program/json_text.h"
#include "reports/error.h"
#include "reports/html_report.h"
#include "reports/jsonl.h"

namespace parity::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp = R"(usage: parity report RUN_DIR [-o OUT.html]

Builds one self-contained HTML page (it loads nothing: open it anywhere, attach it to a CI run) from a
campaign's output folder: RUN_DIR/run.json and RUN_DIR/findings.jsonl. A summary (LibTorch, cases, cases/s,
groups, expected and unexpected findings, coverage), then one section per group of findings: the smallest
recorded program, both traces side by side with the first differing observation marked, and C++ and Python
repros with copy buttons. Filters by op, observation kind and error category; a filtered view can be shared
as report.html#op=mul&unexpected=1.

A campaign that was killed leaves a torn last line or no run.json: the page is still built from what can be
read, and says what was left out.

options:
  -o, --out OUT    the page to write (default RUN_DIR/report.html): a new file or a regular one, which is
                   replaced whole; a symbolic link, a FIFO, a device or RUN_DIR's run.json or findings.jsonl is
                   refused

exit status: 0 written, 2 bad usage, or nothing readable in RUN_DIR.
)";

std::optional<reports::RunSummary> read_summary(const fs::path& path, std::vector<std::string>& warnings) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    warnings.push_back(path.string() + " is missing (the campaign did not finish): counts below are of the "
                       "recorded findings only");
    return std::nullopt;
  }
  // Errors of reading and parsing name the file themselves.
  nlohmann::json j;
  try {
    j = program::parse_json_text(files::read_text_file(path), path.string());
  } catch (const files::FileError& e) {
    warnings.push_back(std::string(e.what()) + "; it is left out");
    return std::nullopt;
  } catch (const program::JsonError& e) {
    warnings.push_back(std::string(e.what()) + "; it is left out");
    return std::nullopt;
  }
  try {
    reports::RunSummary s = reports::run_summary_from_json(j);
    if (const auto problems = reports::count_problems(s); !problems.empty()) {
      warnings.push_back(path.string() + ": its counts are no campaign's (" + problems.front() + "); it is left out");
      return std::nullopt;
    }
    return s;
  } catch (const std::exception& e) {
    warnings.push_back(path.string() + " is unreadable (" + e.what() + "); it is left out");
  }
  return std::nullopt;
}

// Every finding that can be read; the others are named in the page rather than failing the whole report.
void read_findings(const fs::path& path, reports::ReportInput& in) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;  // run.json's count of recorded findings tells whether some are missing
  const reports::JsonlContents contents = reports::read_jsonl(path, reports::Malformed::Skip);
  if (contents.torn_tail)
    in.warnings.push_back(path.string() + " ends in a torn line (the campaign was killed while writing it); "
                          "that finding is left out");
  for (const auto& m : contents.malformed) in.warnings.push_back(m + " (left out)");
  for (std::size_t i = 0; i < contents.records.size(); ++i) {
    try {
      in.findings.push_back(reports::finding_from_json(contents.records[i]));
      in.finding_indices.push_back(i);
    } catch (const std::exception& e) {
      in.warnings.push_back(path.string() + ": finding " + std::to_string(i) + " is left out: " + e.what());
    }
  }
}

}  // namespace

int report_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Args args("parity report", argv, {{"--out", true, "-o"}});
  if (args.positional().size() != 1)
    throw UsageError("`parity report` takes one RUN_DIR (see `parity report --help`)");
  const fs::path dir = args.positional()[0];
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw UsageError(dir.string() + " is not a folder (give a campaign's --out folder)");
  if (!fs::exists(dir / "run.json", ec) && !fs::exists(dir / "findings.jsonl", ec))
    throw reports::ReportError(dir.string() + " holds no campaign output (no run.json, no findings.jsonl)");
  fs::path out = dir / "report.html";
  if (auto o = args.value("--out")) {
    if (o->empty()) throw UsageError("-o needs a file name");
    out = *o;
  }
  if (fs::is_directory(out, ec)) throw UsageError("-o " + out.string() + " is a folder; give the page's file name");
  files::refuse_output_over_input(out, {dir / "run.json", dir / "findings.jsonl"}, "-o");

  reports::ReportInput in;
  in.findings_path = (dir / "findings.jsonl").string();
  in.summary = read_summary(dir / "run.json", in.warnings);
  read_findings(dir / "findings.jsonl", in);
  if (in.summary && in.summary->recorded_findings > in.findings.size())
    in.warnings.push_back("run.json counts " + std::to_string(in.summary->recorded_findings) +
                          " recorded findings, but only " + std::to_string(in.findings.size()) + " could be read from " +
                          in.findings_path + ": groups without one show run.json's smallest program, without traces");
  const std::string html = reports::html_report(in);

  files::write_text_file_atomically(out, html, "the report");
  for (const auto& w : in.warnings) std::cerr << "parity report: warning: " << one_line(w) << "\n";
  std::cout << "parity report: " << in.findings.size() << " findings";
  if (in.summary) std::cout << " (" << in.summary->cases << " cases, " << in.summary->groups.size() << " groups)";
  std::cout << " -> " << out.string() << "\n";
  return 0;
}

}  // namespace parity::cli
