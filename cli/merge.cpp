// `parity merge`: joins the output folders of a sharded campaign into one (run.json and findings.jsonl).
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "files/folder_lock.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "program/json_text.h"
#include "reports/error.h"
#include "reports/jsonl.h"
#include "reports/merge.h"
#include "reports/run_summary.h"

namespace parity::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp = R"(usage: parity merge DIR DIR... -o OUT [--allow-partial]

Joins the outputs of one campaign run in shards (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX) into OUT: run.json with
the counts of all shards (wall time of the longest shard), and findings.jsonl with every shard's findings, in
shard order. OUT must be a new or an empty folder (a symbolic link named run.json or findings.jsonl in it counts
as a run already there, dangling or not); both files appear in it together, or neither does if the merge is
killed or fails.

Refused always: shards of another campaign (seed, generator, LibTorch, parity commit, limits, budget), a shard
given twice, and a run.json that is no campaign's (a shard index or total out of range, more cases than its
budget holds). Refused unless --allow-partial, since the merged run would cover only part of its budget: a
missing shard, an interrupted one, one that ran fewer cases than its --cases share, findings.jsonl lines that
are not findings of their shard (bad JSON, a record of another kind, seed or shard), a torn last line, or fewer
findings than its run.json recorded. Each problem is named with its file and line.

options:
  -o, --out OUT     the folder to write
  --allow-partial   merge such a set anyway: lines that are no findings are left out, every problem is printed
                    on stderr and listed in OUT/run.json ("partial")

exit status: 0 merged (whole, or partial with --allow-partial), 2 bad usage, unreadable or inconsistent shards,
or a partial set without --allow-partial.
)";

// Problems named in the error line that refuses a partial set; all of them with --allow-partial.
constexpr std::size_t kProblemsShown = 5;

reports::ShardOutput read_shard(const fs::path& dir) {
  reports::ShardOutput s{dir, {}, {}};
  const fs::path run = dir / "run.json";
  std::error_code ec;
  if (!fs::exists(run, ec) && fs::is_directory(dir, ec))
    throw reports::ReportError(run.string() + ": missing: the shard did not finish (killed?); run it again, or "
                               "leave its folder out and give --allow-partial to merge the others");
  const nlohmann::json j = program::parse_json_text(files::read_text_file(run), run.string());
  try {
    s.summary = reports::run_summary_from_json(j);
  } catch (const reports::ReportError&) {
    throw;
  } catch (const std::exception& e) {
    throw reports::ReportError(run.string() + ": " + e.what());
  }
  if (const auto problems = reports::count_problems(s.summary); !problems.empty())
    throw reports::ReportError(run.string() + ": its counts are no campaign's (edited, or damaged): " +
                               problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) +
                                                                             " more)"
                                                                       : std::string()));
  // parity fuzz always writes findings.jsonl (empty without findings); a shard's folder copied without it is
  // still a shard, whose run.json says how many findings went missing.
  if (fs::exists(dir / "findings.jsonl", ec))
    s.findings = reports::read_jsonl(dir / "findings.jsonl", reports::Malformed::Skip);
  return s;
}

}  // namespace

int merge_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Args args("parity merge", argv, {{"--out", true, "-o"}, {"--allow-partial", false}});
  auto out = args.value("--out");
  if (!out || out->empty()) throw UsageError("`parity merge` needs -o OUT (see `parity merge --help`)");
  if (args.positional().empty()) throw UsageError("`parity merge` needs the shards' folders (see `parity merge --help`)");
  const fs::path out_dir = *out;
  const bool allow_partial = args.has("--allow-partial");

  std::vector<reports::ShardOutput> shards;
  for (const auto& d : args.positional()) {
    std::error_code ec;
    if (fs::exists(out_dir) && fs::equivalent(d, out_dir, ec))
      throw UsageError("OUT " + out_dir.string() + " is one of the shards' folders");
    shards.push_back(read_shard(d));
  }
  const reports::MergedRun merged = reports::merge_shards(shards);
  const std::vector<std::string>& problems = merged.problems;
  if (!problems.empty() && !allow_partial) {
    std::string listed;
    for (std::size_t i = 0; i < problems.size() && i < kProblemsShown; ++i) listed += (i ? "; " : "") + problems[i];
    if (problems.size() > kProblemsShown)
      listed += "; and " + std::to_string(problems.size() - kProblemsShown) + " more";
    throw reports::ReportError("the shards make a partial run: " + listed +
                               ". Give --allow-partial to merge them anyway (run.json then lists every problem)");
  }

  // One merge into OUT at a time; holding that, what a merge killed before publishing left is removed.
  const files::FolderLock lock = files::FolderLock::beside(out_dir);
  files::remove_leftover_staging(out_dir);
  // symlink_status: a dangling link is there too, and writing through it would write outside OUT.
  std::error_code ec;
  for (const char* name : {"run.json", "findings.jsonl"})
    if (fs::exists(fs::symlink_status(out_dir / name, ec)))
      throw UsageError(out_dir.string() + " already holds a run (" + name + "): merge into an empty folder");
  // Both files appear at once or not at all: a merge killed between them must not leave half a run.
  files::StagedFolder staged(out_dir);
  if (!merged.findings.empty()) {
    reports::JsonlWriter writer(staged.path() / "findings.jsonl");
    for (const auto& record : merged.findings) writer.append(record);
  }
  reports::write_run_summary(staged.path() / "run.json", merged.summary);
  staged.publish();
  const reports::RunSummary& m = merged.summary;
  for (const auto& p : problems) std::cerr << "parity merge: --allow-partial: " << p << "\n";
  if (!problems.empty())
    std::cerr << "parity merge: --allow-partial: the merged run is partial (" << problems.size()
              << " problems above, listed in run.json \"partial\")\n";
  std::cout << "parity merge: " << shards.size() << " shards, " << m.cases << " cases, " << m.findings
            << " findings (" << m.unexpected_findings << " unexpected), " << merged.findings.size()
            << " recorded; seed " << m.seed << (problems.empty() ? "" : "; partial") << "\nsummary: "
            << (out_dir / "run.json").string();
  if (!merged.findings.empty()) std::cout << ", findings: " << (out_dir / "findings.jsonl").string();
  std::cout << "\n";
  return 0;
}

}  // namespace parity::cli
