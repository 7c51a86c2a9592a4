// Joining the outputs of a sharded campaign (GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX): the shards must be one
// campaign (same seed, generator, LibTorch, parity commit, limits) and all of them must be there.
#pragma once
#include <vector>

#include "reports/run_summary.h"

namespace parity::reports {

// The summary of the whole campaign: counts summed, wall time the longest shard's, cases/s over it, shard
// 0 of 1. Throws ReportError naming the first mismatching field or the missing shard indices.
RunSummary merge_summaries(const std::vector<RunSummary>& shards);

}  // namespace parity::reports
