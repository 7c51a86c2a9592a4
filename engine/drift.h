// `parity drift`: what changed between two PyTorch releases, found by generated programs. The same programs run
// on this build's LibTorch and on another build's (its `parity worker`, engine/trace_worker.h); their LibTorch
// traces are compared as a campaign compares impl with LibTorch, each difference is shrunk to a minimal program
// and recorded. The output is a campaign's (findings.jsonl, run.json with its `drift` field, report.html from
// `parity report`), with this build's LibTorch on the impl side and the other's on the oracle side.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/campaign.h"
#include "generators/program_gen.h"
#include "reports/run_summary.h"

namespace parity::engine {

struct DriftConfig {
  std::string other_parity;  // the other build's parity binary
  std::uint64_t seed = 0;
  std::optional<double> seconds;
  std::optional<std::uint64_t> cases;
  std::filesystem::path out = "parity-drift";
  generators::GenConfig generator;
  std::chrono::milliseconds timeout{10000};              // of one program on one LibTorch
  std::size_t memory_limit_bytes = kDefaultMemoryLimitBytes;  // of one worker
  double shrink_share = 0.25;                             // as CampaignConfig's
};

// Runs cases until a budget is spent or `stop` turns true, into an output folder prepare_output made ready.
// Throws EvaluationError when a worker cannot run, reports::ReportError when the output cannot be written.
reports::RunSummary run_drift(const DriftConfig& config, const std::atomic<bool>* stop = nullptr,
                              CampaignObserver* observer = nullptr);

}  // namespace parity::engine
