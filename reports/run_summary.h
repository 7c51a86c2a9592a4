// The summary of one campaign (run.json): what ran, how fast, what was found, and what the generator
// exercised, so a person can judge a green run too (an op never executed ok tests nothing).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/divergence_kind.h"
#include "reports/finding_group.h"
#include "reports/oracle.h"

namespace parity::reports {

struct OpCounts {
  std::uint64_t generated = 0;  // steps of this op in generated programs
  std::uint64_t ok = 0;         // ... that LibTorch executed
  std::uint64_t raised = 0;     // ... that raised on LibTorch
  std::uint64_t skipped = 0;    // ... whose input did not exist
  bool operator==(const OpCounts&) const = default;
};

// How a campaign isolated its cases (run.json "isolation"; `parity fuzz --isolation`).
enum class Isolation {
  Workers,  // persistent worker processes, each running many cases (engine/worker_pool.h)
  Fork,     // a child forked for every case and every shrinking candidate: the reference the workers must match
};
std::string_view to_string(Isolation);  // "workers", "fork"
std::optional<Isolation> parse_isolation(std::string_view);
// For a person: "2 workers", "1 worker", "a child forked per case".
std::string describe_isolation(Isolation, int jobs);

struct ShardInfo {
  int index = 0;
  int total = 1;
  bool operator==(const ShardInfo&) const = default;
};
// The most shards a campaign may be split into (GTEST_TOTAL_SHARDS); run.json naming more is refused when read.
inline constexpr int kMaxShards = 1000000;

// What a campaign was asked to run (`--cases`, `--seconds`), so that a reader of run.json can tell a run that spent
// its budget from one cut short. A campaign has one or both; a run.json of version 4 or older recorded neither.
struct Budget {
  std::optional<std::uint64_t> cases;  // case indices 0..cases-1, shared out among the shards
  std::optional<double> seconds;
  std::optional<std::uint64_t> max_findings;  // stop at this many unexpected findings (--max-findings, -x)
  bool operator==(const Budget&) const = default;
};

// Coverage guidance in a campaign (engine/corpus.h): the share of cases asked to run a mutant, and what it did.
// A run.json of version 8 or older ran without it.
struct Guidance {
  double share = 0;
  std::uint64_t mutated = 0;   // cases that ran a mutant of a corpus entry
  std::uint64_t replayed = 0;  // cases that ran a corpus folder's program as it is
  std::uint64_t added = 0;     // cases that reached a coverage key first: the corpus entries made
  std::uint64_t saved = 0;     // programs new to the corpus folder (--corpus) when the campaign ended
  bool operator==(const Guidance&) const = default;
};

// How many of the case indices 0..cases-1 fall to `shard` (those k with k % total == index).
std::uint64_t cases_in_shard(std::uint64_t cases, const ShardInfo& shard);

// How often the campaign exercised what it is meant to test, judged on LibTorch alone (judge/coverage.h):
// ops executed ok, layout kinds of operands of ok steps, memory formats requested by ok steps, the dtypes of ok
// steps' results, error categories LibTorch raised (whatever impl did: a disagreement is a finding, the category
// was still reached), and autograd situations (counted once per case).
struct Coverage {
  using Counts = std::map<std::string, std::uint64_t>;
  Counts ops, layouts, memory_formats, dtypes, error_categories, situations;
  Counts situation_pairs;   // two events on one tensor (judge::situation_pairs())
  Counts backward_through;  // differentiable ops a backward went through (judge::backward_through_ops())
  // Role-keyed pairs and triples of events on one storage (judge/role_combinations.h): every key met, and the
  // goals (judge::role_pair_goals(), role_triple_goals()) even at 0.
  Counts role_pairs, role_triples;
  // Each op × operand situation met (judge/operand_class.h): only keys met, none a goal.
  Counts op_operands;
  // Keys ("ops.mm", "dtypes.bool") the campaign's programs could not reach because its selection left them out
  // (--ops, --dtypes, a protocol backend's declaration): not starved, whatever their count.
  std::set<std::string> not_goals;
  // Every expected key at 0: a campaign starts from this, so that a key it never reaches shows in run.json.
  static Coverage zeroed();
  bool operator==(const Coverage&) const = default;
};

// The expected keys (judge::coverage_dimensions()) with no count, as "dimension.key"
// ("situations.version_error"), in report order. Derived: run.json shows it, reading run.json recomputes it.
std::vector<std::string> starved(const Coverage&);

struct RunSummary {
  std::string libtorch_version;
  std::string parity_commit;
  int generator_version = 0;
  std::string device = "cpu";  // where both backends ran the programs
  Oracle oracle = Oracle::LibTorch;  // what judged impl
  std::vector<std::string> planted_faults;  // impl's deliberate bugs (PARITY_PLANT), "op=kind"; empty normally
  std::uint64_t seed = 0;
  double seconds = 0;
  std::uint64_t cases = 0;
  double cases_per_second = 0;
  std::uint64_t findings = 0;             // every diverging case, duplicates of a signature included
  std::uint64_t unexpected_findings = 0;  // not covered by a known divergence
  std::uint64_t expected_findings = 0;
  std::uint64_t recorded_findings = 0;    // written to findings.jsonl (at most a few per signature)
  std::uint64_t crashes = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t out_of_memory = 0;        // cases whose process exceeded the memory limit
  double shrink_seconds = 0;              // spent shrinking, within the campaign's seconds
  std::uint64_t unshrunk_findings = 0;    // recorded as found: the campaign's shrinking budget was spent
  std::uint64_t flaky_findings = 0;       // recorded findings that did not diverge on every confirming run
  FindingGroups groups;
  std::map<judge::DivergenceKind, std::uint64_t> findings_by_kind;
  std::map<std::string, OpCounts> ops;
  std::map<std::string, std::uint64_t> error_categories;   // steps where both backends raised this category
  // Findings each known-divergence entry in force matched (0: the entry matched nothing in this run).
  std::map<std::string, std::uint64_t> known_divergence_hits;
  Coverage coverage;
  ShardInfo shard;
  Budget budget;
  Guidance guidance;
  int max_steps = 0;
  int timeout_ms = 0;
  Isolation isolation = Isolation::Workers;
  int jobs = 1;                       // cases evaluated side by side (per shard)
  std::uint64_t memory_limit_mb = 0;  // of one evaluating process; 0: none
  bool interrupted = false;  // stopped by a signal (SIGINT, SIGTERM, SIGHUP, SIGUSR1) before its budget was spent
  int resumed = 0;           // times the campaign went on from its journal (parity fuzz --resume) after a stop
  // What `parity merge --allow-partial` let through (reports/merge.h): a shard missing, interrupted or short of its
  // budget, findings lost or lines that were no findings, one sentence each naming the file. Empty for a campaign
  // and a whole merge.
  std::vector<std::string> partial;
  // A `parity drift` run compares two LibTorch releases instead of impl with LibTorch: the findings' impl side is
  // this build's LibTorch (libtorch_version), their oracle side the other build's.
  struct Drift {
    std::string other_libtorch_version;
    std::string other_parity;  // the other build's parity binary
    bool operator==(const Drift&) const = default;
  };
  std::optional<Drift> drift;
  // Present when either side was a protocol backend (`--impl-cmd`, `--oracle-cmd`: docs/backend-protocol.md):
  // each side's command ("" in-process), library, version and protocol version (0 in-process), what was not
  // compared because a side does not observe it, and the ops the programs could not use.
  struct Side {
    std::string command, library, version;
    int protocol = 0;
    bool operator==(const Side&) const = default;
  };
  struct Backends {
    Side impl, oracle;
    std::vector<std::string> not_compared;  // observation names (judge/observation.h)
    std::vector<std::string> ops_left_out;  // op names neither generated nor compared
    bool operator==(const Backends&) const = default;
  };
  std::optional<Backends> backends;
  bool operator==(const RunSummary&) const = default;
};

nlohmann::json to_json(const RunSummary&);
// Writes run.json atomically (write_text_file_atomically). Throws ReportError.
void write_run_summary(const std::filesystem::path& path, const RunSummary&);
RunSummary run_summary_from_json(const nlohmann::json&);  // throws program::JsonError

// Why `s`'s counts cannot be one campaign's: findings that are not its groups' or kinds' sum or not unexpected plus
// expected, more findings or dead cases than cases, more recorded findings than findings, more cases than its budget
// gives its shard. One line per count, naming its field; empty when they can be. What parity reads back (a
// journal, a shard's run.json, a report's) is held to it: a hand-edited count would otherwise be reported as found.
std::vector<std::string> count_problems(const RunSummary& s);

}  // namespace parity::reports
