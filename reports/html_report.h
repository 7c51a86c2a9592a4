// The HTML report of a campaign: one self-contained page (no network, no file beside it) that a person reads to
// triage. A summary, then one section per finding group with its smallest program, both traces side by side
// with the first differing observation marked, and C++/Python repros to copy. Everything taken from the data
// is escaped, and a Content-Security-Policy lets the page run only the script and style it brought.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/finding.h"
#include "reports/run_summary.h"

namespace parity::reports {

struct ReportInput {
  std::optional<RunSummary> summary;  // absent when run.json is missing or unreadable (a killed campaign)
  std::vector<Finding> findings;      // in findings.jsonl order
  std::vector<std::size_t> finding_indices;  // each finding's record index in findings.jsonl (for `parity replay`)
  std::string findings_path;          // as the replay command line should name it
  std::vector<std::string> warnings;  // what could not be read and was left out; shown first
};

std::string html_report(const ReportInput&);

// Text made safe for an HTML text node or a double- or single-quoted attribute value.
std::string html_escape(std::string_view);

}  // namespace parity::reports
