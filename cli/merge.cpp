// `parity merge`: joins the output folders of a sharded campaign into one (run.json and findings.jsonl).
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "reports/error.h"
#include "reports/jsonl.h"
#include "reports/merge.h"
#include "reports/run_summary.h"

namespace parity::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHelp = R"(usage: parity merge DIR DIR... -o OUT

Joins the outputs of one campaign run in shards (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX) into OUT: run.json with
the counts of all shards (wall time of the longest shard), and findings.jsonl with every shard's findings, in
shard order. The shards must be one campaign (same seed, generator, LibTorch, parity commit, limits) and all
must be given; a missing or repeated shard is refused. OUT must not hold a run already.

options:
  -o, --out OUT    the folder to write

exit status: 0 merged, 2 bad usage, a missing shard, or outputs of different campaigns.
)";

struct Shard {
  fs::path dir;
  reports::RunSummary summary;
  reports::JsonlContents findings;
};

Shard read_shard(const fs::path& dir) {
  Shard s{dir, {}, {}};
  const fs::path run = dir / "run.json";
  try {
    s.summary = reports::run_summary_from_json(nlohmann::json::parse(reports::read_text_file(run)));
  } catch (const nlohmann::json::parse_error& e) {
    throw reports::ReportError(run.string() + ": " + reports::describe_parse_error(e));
  } catch (const std::exception& e) {
    throw reports::ReportError(run.string() + ": " + e.what());
  }
  // parity fuzz always writes findings.jsonl (empty without findings); a shard's folder copied without it is
  // still a shard, whose run.json has the counts.
  if (fs::exists(dir / "findings.jsonl")) s.findings = reports::read_jsonl(dir / "findings.jsonl");
  return s;
}

}  // namespace

int merge_command(const std::vector<std::string>& argv) {
  if (print_help_if_asked(argv, kHelp)) return 0;
  Args args("parity merge", argv, {{"--out", true, "-o"}});
  auto out = args.value("--out");
  if (!out || out->empty()) throw UsageError("`parity merge` needs -o OUT (see `parity merge --help`)");
  if (args.positional().empty()) throw UsageError("`parity merge` needs the shards' folders (see `parity merge --help`)");
  const fs::path out_dir = *out;

  std::vector<Shard> shards;
  std::vector<reports::RunSummary> summaries;
  for (const auto& d : args.positional()) {
    std::error_code ec;
    if (fs::exists(out_dir) && fs::equivalent(d, out_dir, ec))
      throw UsageError("OUT " + out_dir.string() + " is one of the shards' folders");
    shards.push_back(read_shard(d));
    summaries.push_back(shards.back().summary);
  }
  const reports::RunSummary merged = reports::merge_summaries(summaries);

  if (fs::exists(out_dir / "run.json") || fs::exists(out_dir / "findings.jsonl"))
    throw UsageError(out_dir.string() + " already holds a run: merge into an empty folder");
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir))
    throw reports::ReportError(out_dir.string() + ": cannot create the output folder" + (ec ? ": " + ec.message() : ""));

  std::uint64_t findings = 0;
  {
    std::optional<reports::JsonlWriter> writer;
    for (const Shard& s : shards) {
      if (s.findings.torn_tail)
        std::cerr << "parity merge: warning: " << (s.dir / "findings.jsonl").string()
                  << " ends in a torn line (the shard was killed while writing); it is left out\n";
      for (const auto& record : s.findings.records) {
        if (!writer) writer.emplace(out_dir / "findings.jsonl");
        writer->append(record);
        ++findings;
      }
    }
  }
  reports::write_run_summary(out_dir / "run.json", merged);
  std::cout << "parity merge: " << shards.size() << " shards, " << merged.cases << " cases, " << merged.findings
            << " findings (" << merged.unexpected_findings << " unexpected), " << findings << " recorded; seed "
            << merged.seed << "\nsummary: " << (out_dir / "run.json").string();
  if (findings) std::cout << ", findings: " << (out_dir / "findings.jsonl").string();
  std::cout << "\n";
  return 0;
}

}  // namespace parity::cli
