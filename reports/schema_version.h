// The version of parity's report records (findings.jsonl lines, run.json). Programs inside them carry their own
// (program::kSchemaVersion). Documented, as JSON Schema, in reports/schema/; bump both together.
//   1: the first reports.
//   2: run.json has `groups` (count, first case, smallest program per signature) in place of
//      `findings_by_signature`, and `device`; findings and run.json carry `planted_faults`.
#pragma once

namespace parity::reports {

inline constexpr int kReportSchemaVersion = 2;

}  // namespace parity::reports
