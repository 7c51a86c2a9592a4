// Coverage guidance's corpus: programs that reached a coverage key no case before them had, kept to be mutated
// (generators/mutate.h), beside the programs a corpus folder brought (`parity fuzz --corpus DIR`), findings of
// earlier campaigns among them. A share of cases (CampaignConfig::guided_share) runs a mutant of an entry
// instead of the generator's program; a shard's first cases run the folder's programs as they are (regression
// cases).
//
// Deterministic per seed: case k draws only from entries added by cases at least corpus_lag of the shard's
// cases before it, and the campaign starts case k only once every such case is judged (may_start). So the
// program a case runs does not depend on --jobs, the isolation or how far judging had got.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "generators/mutate.h"
#include "generators/program_gen.h"
#include "generators/rng.h"
#include "judge/coverage.h"
#include "judge/operand_class.h"
#include "program/program.h"
#include "reports/case_origin.h"
#include "reports/run_summary.h"

namespace parity::engine {

// A mutant costs about three generated cases (corpus programs are the long ones: they reached more, and a case
// costs more than its length), so a twelfth of the cases keeps the campaign's throughput within a fifth of an
// unguided one's (parity_throughput_bench). Per case, a mutant meets a rare combination of two situations several
// times as often as a generated program does (planted faults, campaigns of --guided-share 1): guidance gets the
// most of the cases that budget allows.
inline constexpr double kDefaultGuidedShare = 0.08;
// Cases of a shard between an entry's case and the first case that may mutate it, once a campaign is under way:
// more than a campaign has in flight up to 28 jobs (9 per job), so that starting a case rarely waits for judging.
inline constexpr std::uint64_t kCorpusLag = 256;
// The lag of the shard's case of this ordinal (its index among the shard's cases): half the cases before it, at
// least 1, at most kCorpusLag. A fixed lag kept guidance out of the first kCorpusLag cases, where the faults
// the recipes reach soonest are found (parity_detection_bench); growing with the campaign, it costs only the
// first 2 × kCorpusLag cases some of their parallelism, a few milliseconds.
std::uint64_t corpus_lag(std::uint64_t ordinal);
// Of the mutants, this share is aimed at a key that no case the mutant may draw on met (the entries visible to
// it met every key met so far): an op × operand situation (judge/operand_class.h), where a step of that op in an
// entry is put in that situation by the mutation that makes it; or a role goal (judge/role_combinations.h), where
// an entry that runs a backward gets the mutation that starts it (RetainView for retain_grad on a view,
// WriteBefore for a saved tensor written). A key met first is a new meeting of situations, which the generator's
// recipes may reach only rarely. The rest are mutations drawn at random.
inline constexpr double kAimedShare = 0.5;
// Entries holding the op tried for an aimed mutant, until the mutation applies to one (a .grad to deep-copy
// needs a backward before the step): a draw costs microseconds, a case milliseconds.
inline constexpr int kAimedParents = 8;
// Half of the mutants come from the newest entries (what just reached something new is explored first), half
// from all.
inline constexpr std::size_t kRecentEntries = 32;
// The campaign's own record of its corpus, so that --resume rebuilds it: loaded programs, then one line per entry
// added, written at each checkpoint.
inline constexpr const char* kCorpusLogFile = "corpus.jsonl";

// The mutation that puts a step in an operand situation (SharedOperand for shared_storage, ...): what an aimed
// mutant applies.
generators::Mutation mutation_making(judge::OperandClass);
// The keys a mutant may be aimed at: op_operand_names(), then role_pair_goals() and role_triple_goals().
const std::vector<std::string>& aim_keys();

struct PlannedCase {
  program::Program program;
  reports::CaseOrigin origin;
};

class Corpus {
 public:
  // `loaded`: the corpus folder's programs (read_corpus_folder), in their order.
  Corpus(std::vector<program::Program> loaded, reports::ShardInfo shard, double guided_share,
         generators::GenConfig config);

  // What case k runs instead of the generator's program; nullopt: the generator's.
  std::optional<PlannedCase> plan(std::uint64_t seed, std::uint64_t k) const;
  // Whether every case that may add an entry case k can draw is judged (`next_to_judge`: the first not judged).
  bool may_start(std::uint64_t k, std::uint64_t next_to_judge) const;
  // Case k reached a key first; cases are added in increasing k. `met`: the coverage it reached, of which the
  // aim_keys() are kept (met first or not).
  void add(std::uint64_t k, program::Program p, const judge::CoverageTags& met = {});
  bool guided() const { return share_ > 0; }

  // What the run added, in order.
  std::vector<program::Program> added() const;
  const std::vector<program::Program>& loaded() const { return loaded_; }

  // The log's lines (kCorpusLogFile) not yet taken: the loaded programs first, then each entry added. The
  // campaign appends them at each checkpoint, before the journal says which cases are judged.
  std::vector<nlohmann::json> take_log_lines();
  // The corpus a killed campaign had when it had judged every case below `next_case`, from its log (entries
  // of later cases are dropped: judging them again adds them again). Throws reports::ReportError.
  static Corpus restore(const std::filesystem::path& log, std::uint64_t next_case, reports::ShardInfo shard,
                        double guided_share, generators::GenConfig config);

 private:
  struct Entry {
    std::uint64_t added_by;
    program::Program program;
    std::vector<std::size_t> met;  // indices into aim_keys()
  };
  std::uint64_t lag_before(std::uint64_t k) const;  // corpus_lag of case k, in the campaign's case indices
  std::size_t visible_to(std::uint64_t k) const;     // loaded ones first, then those old enough
  // A mutant of an entry below `entries` aimed at a key none of them met; nullopt when no draw makes one.
  std::optional<program::Program> aimed(std::size_t entries, generators::Rng& rng) const;
  void note_met(std::size_t entry);  // first_met_ for entries_[entry]
  std::vector<program::Program> loaded_;
  std::vector<program::Program> regressions_;  // the loaded programs this shard runs, in order
  std::vector<Entry> entries_;
  // Per aim_keys() key: the index in entries_ of the first entry that met it (entries_.size() or more: none
  // yet).
  std::vector<std::size_t> first_met_;
  std::vector<std::vector<std::size_t>> with_op_;  // per OpId: the indices in entries_ of entries holding it
  std::vector<std::size_t> with_backward_;          // the indices in entries_ of entries that run a backward
  bool loaded_logged_ = false;
  std::size_t logged_ = 0;  // entries_ already in the log
  reports::ShardInfo shard_;
  double share_;
  generators::GenConfig config_;
};

// The corpus folder: one program per DIR/*.json file (program JSON, as `parity run` reads), named by a hash of
// its content. Read in name order; programs the campaign cannot run (another device, ops outside the selection)
// are cut to what it can. An absent folder is an empty corpus. Throws reports::ReportError naming a file that is
// not a program.
std::vector<program::Program> read_corpus_folder(const std::filesystem::path& dir, const generators::GenConfig&);
// Writes each program not already there; returns how many were new. Throws reports::ReportError.
std::size_t write_corpus_folder(const std::filesystem::path& dir, const std::vector<program::Program>&);

}  // namespace parity::engine
