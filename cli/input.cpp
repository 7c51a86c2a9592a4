#include "cli/input.h"

#include <algorithm>
#include <iostream>

#include "cli/args.h"
#include "files/input_file.h"
#include "program/json.h"
#include "program/json_text.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/jsonl.h"

namespace parity::cli {

using nlohmann::json;

namespace {

// Decoder errors name the place inside the document; this adds the file.
template <typename F>
auto decode(const std::filesystem::path& path, F&& f) {
  try {
    return f();
  } catch (const program::JsonError& e) {
    throw program::JsonError(path.string() + ": " + e.what());
  }
}

// A program with no step runs nothing, and its traces agree: refused, so that no command says "agree" about it.
program::Program with_steps(program::Program p, const std::filesystem::path& path) {
  if (p.steps.empty())
    throw program::JsonError(path.string() + ": the program has no step (\"steps\": []): there is nothing to run");
  return p;
}

ReplayInput from_document(const json& j, const std::filesystem::path& path) {
  ReplayInput in;
  if (j.is_object() && j.contains("kind") && j["kind"] == "finding") {
    in.finding = decode(path, [&] { return reports::finding_from_json(j); });
    in.program = with_steps(in.finding->program, path);
  } else if (j.is_object() && j.contains("steps")) {
    in.program = with_steps(decode(path, [&] { return program::program_from_json(j); }), path);
  } else {
    throw reports::ReportError(path.string() +
                               ": neither a finding (\"kind\": \"finding\") nor a program (\"steps\": [...])");
  }
  return in;
}

}  // namespace

json load_json_file(const std::filesystem::path& path) {
  return program::parse_json_text(files::read_text_file(path), path.string());
}

program::Program load_program_file(const std::filesystem::path& path) {
  json j = load_json_file(path);
  return with_steps(decode(path, [&] { return program::program_from_json(j); }), path);
}

ReplayInput load_replay_input(const std::filesystem::path& path, std::optional<std::size_t> index) {
  const std::string text = files::read_text_file(path);
  json whole;
  std::string whole_error;
  try {
    whole = program::parse_json_text(text, path.string());
  } catch (const program::JsonError& e) {
    whole_error = e.what();
  }
  if (whole_error.empty()) {
    if (index && *index != 0)
      throw UsageError(path.string() + " holds one finding; --index " + std::to_string(*index) + " is out of range");
    return from_document(whole, path);
  }
  // Not one document: a findings.jsonl, one finding per line, whose last line may be torn.
  reports::JsonlContents lines;
  try {
    lines = reports::parse_jsonl(text, path.string());
  } catch (const reports::ReportError&) {
    throw reports::ReportError(whole_error);
  }
  if (lines.records.empty()) throw reports::ReportError(whole_error);
  std::size_t n = index.value_or(0);
  if (n >= lines.records.size())
    throw UsageError(path.string() + " holds " + std::to_string(lines.records.size()) + " complete findings; --index " +
                     std::to_string(n) + " is out of range");
  return from_document(lines.records[n], path.string() + ":" + std::to_string(n + 1));
}

std::vector<LabelledInput> load_replay_inputs(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  std::vector<fs::path> files;
  if (folder) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".json" || ext == ".jsonl") files.push_back(entry.path());
    }
    if (ec) throw reports::ReportError(path.string() + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<LabelledInput> out;
  for (const fs::path& file : files) {
    std::vector<LabelledInput> of_file;
    try {
      const std::string text = files::read_text_file(file);
      if (file.extension() == ".jsonl") {
        // A findings.jsonl, one finding per line; a torn last line (a campaign killed while writing) is left out.
        const reports::JsonlContents lines = reports::parse_jsonl(text, file.string());
        for (std::size_t n = 0; n < lines.records.size(); ++n) {
          const std::string label = file.string() + ":" + std::to_string(lines.lines[n]);
          of_file.push_back(
              {label, file.string() + " --index " + std::to_string(n), from_document(lines.records[n], label)});
        }
      } else {
        of_file.push_back({file.string(), file.string(), from_document(program::parse_json_text(text, file.string()), file)});
      }
    } catch (const std::exception& e) {
      // A campaign's folder also holds its run.json and corpus log: in a folder, what is no finding is passed by.
      if (!folder) throw;
      std::cerr << "parity replay: " << file.string() << " left out: " << e.what() << "\n";
      continue;
    }
    for (LabelledInput& i : of_file) out.push_back(std::move(i));
  }
  if (out.empty()) throw reports::ReportError(path.string() + ": no finding or program to replay");
  return out;
}

reports::KnownDivergences load_known_divergences(const std::optional<std::filesystem::path>& file) {
  if (file) return reports::KnownDivergences::load(*file);
  const auto path = reports::default_known_divergences_path();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return reports::KnownDivergences::load(path);
}

}  // namespace parity::cli
