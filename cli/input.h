// Reading what people hand to `parity`: JSON files, programs, findings. Every problem becomes one line that
// names the file (reports::ReportError or program::JsonError), never a crash.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "program/program.h"
#include "reports/finding.h"
#include "reports/known_divergences.h"

namespace parity::cli {

nlohmann::json load_json_file(const std::filesystem::path& path);
program::Program load_program_file(const std::filesystem::path& path);

// What `parity replay` was given: a finding (from a finding JSON object or line `index` of a findings.jsonl),
// or a bare program.
struct ReplayInput {
  program::Program program;
  std::optional<reports::Finding> finding;
};
ReplayInput load_replay_input(const std::filesystem::path& path, std::optional<std::size_t> index);

// What `parity replay --all` was given: every finding of a findings.jsonl, or one finding or program file, or each
// *.json and *.jsonl file of a folder (in name order) taken so, those that hold none (a campaign's run.json) left
// out with a note on stderr; each labelled FILE or FILE:LINE.
struct LabelledInput {
  std::string label;
  std::string replay_args;  // what replays it alone: "FILE" or "FILE --index N"
  ReplayInput input;
};
std::vector<LabelledInput> load_replay_inputs(const std::filesystem::path& path);

// The known divergences: `file` (--known), which must exist, or else the source tree's ledger, which may be absent
// (a binary copied elsewhere).
reports::KnownDivergences load_known_divergences(const std::optional<std::filesystem::path>& file);

}  // namespace parity::cli
