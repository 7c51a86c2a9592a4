// A campaign's journal (DIR/journal.json): what a campaign killed at any moment needs to go on where it stopped,
// without losing a finding or recording one twice (`parity fuzz --resume DIR`). Cases are judged in index order
// and each case's program and evaluation depend only on the seed, so the whole state of a campaign is its
// settings, the next case to judge, the summary of the cases judged before it, and the one divergence that may
// be between being found and being written to findings.jsonl (its shrinking can take a minute). The journal is
// rewritten whole, atomically, at each such point; findings.jsonl stays the record of the findings themselves.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/campaign.h"
#include "reports/finding.h"
#include "reports/run_summary.h"

namespace parity::engine {

inline constexpr int kJournalVersion = 1;
inline constexpr const char* kJournalFile = "journal.json";

struct Journal {
  CampaignConfig config;  // out is not stored: the journal's own folder is the output
  std::uint64_t next_case = 0;  // every case of this shard below it is judged and in `summary`
  double elapsed = 0;           // seconds the campaign had run when it judged them
  reports::RunSummary summary;  // of the cases judged (build identity and times resumed included)
  // A divergence found (counted in `summary`, case next_case - shard.total) but perhaps not yet in
  // findings.jsonl: its finding before shrinking, with its signature, expectation and confirmation.
  std::optional<reports::Finding> pending;
};

// Writes DIR/journal.json atomically. Throws reports::ReportError.
void write_journal(const std::filesystem::path& dir, const Journal&);
// Reads DIR/journal.json. Throws reports::ReportError naming the file: absent (nothing to resume), unreadable,
// or not a journal of this version.
Journal read_journal(const std::filesystem::path& dir);
// Removes DIR/journal.json once the campaign is complete (run.json then says everything). Throws ReportError.
void remove_journal(const std::filesystem::path& dir);

// Why a journal cannot be resumed by this binary (it would generate or judge other programs: another LibTorch,
// parity commit, generator or set of planted faults), one line per difference; empty when it can.
std::vector<std::string> resume_mismatches(const Journal&);

}  // namespace parity::engine
