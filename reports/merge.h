// Joining the outputs of a sharded campaign (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX) into the output of one run.
// Shards of another campaign (seed, generator, LibTorch, parity commit, limits, budget) and sets that cannot be one
// campaign's (a shard given twice, a run.json counting more cases than its budget holds) are refused outright. A set
// that is one campaign's but not all of it is *partial*: a shard missing, interrupted, or short of its case budget;
// findings.jsonl lines that are no finding of their shard, a torn last line, or fewer findings than run.json
// recorded. Each such problem is returned, one sentence naming the file (and line), for the caller to refuse the
// set or to merge it anyway; a merged run.json lists them (`partial`).
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/jsonl.h"
#include "reports/run_summary.h"

namespace parity::reports {

// A shard's output folder as read: run.json, and findings.jsonl read with Malformed::Skip (empty when absent).
struct ShardOutput {
  std::filesystem::path dir;  // names the shard in messages
  RunSummary summary;
  JsonlContents findings;
};

struct MergedRun {
  // The whole campaign: counts summed, wall time the longest shard's, cases/s over it, shard 0 of 1; `partial`
  // holds the shards' own and every problem below.
  RunSummary summary;
  std::vector<nlohmann::json> findings;  // every shard's findings that are findings of it, as written, shard order
  std::vector<std::string> problems;     // what makes the set partial (empty: the run is whole)
};

// Problems listed per findings.jsonl before the rest are counted in one more line.
inline constexpr std::size_t kMaxProblemsPerFile = 10;

// Throws ReportError naming the file at fault for shards of another campaign or an inconsistent set.
MergedRun merge_shards(const std::vector<ShardOutput>& shards);

}  // namespace parity::reports
