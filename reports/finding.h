// A finding: one divergence between impl and its oracle (LibTorch, or impl on the CPU: reports/oracle.h), with
// everything needed to replay it and to tell which build, generator and LibTorch produced it. One JSON object per
// finding, one per line in findings.jsonl.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "judge/compare.h"
#include "judge/signature.h"
#include "judge/trace.h"
#include "program/program.h"
#include "reports/case_origin.h"
#include "reports/oracle.h"

namespace parity::reports {

struct Finding {
  std::string parity_commit;
  int generator_version = 0;
  std::string libtorch_version;
  std::string device = "cpu";
  Oracle oracle = Oracle::LibTorch;  // what judged impl: what a replay runs again
  // The protocol backends (docs/backend-protocol.md) of either side, as commands; empty: in process. A replay
  // starts the same ones unless told otherwise.
  std::string impl_command, oracle_command;
  std::vector<std::string> planted_faults;  // impl's deliberate bugs (PARITY_PLANT) in force; empty normally
  std::uint64_t seed = 0;        // the campaign's seed
  std::uint64_t case_index = 0;  // case k of the campaign
  std::uint64_t case_seed = 0;   // what the generator was given for case k
  int size = 0;                  // the generator's size for case k
  CaseOrigin origin = CaseOrigin::Generated;  // only a generated program is case k of the seed
  judge::Signature signature;
  judge::Divergence::Severity severity = judge::Divergence::Severity::Major;
  bool expected = false;  // matched a known divergence
  std::string known_reason;
  // The program evaluated again `runs` times before shrinking (parity fuzz --confirm), `diverged` of them with
  // this signature. Fewer than all: the finding is flaky (it depends on something the program does not fix, such
  // as timing or memory), and it is recorded as found, since shrinking needs a divergence that repeats. Absent:
  // not confirmed (--confirm 0, or the campaign was stopped meanwhile).
  struct Reproducibility {
    int runs = 0;
    int diverged = 0;
    bool flaky() const { return diverged < runs; }
    bool operator==(const Reproducibility&) const = default;
  };
  std::optional<Reproducibility> reproducible;
  program::Program program;  // shrunk
  std::size_t original_program_size = 0;  // steps before shrinking
  int shrink_evaluations = 0;
  judge::Divergence divergence;
  std::optional<judge::Trace> impl_trace;    // absent when the case crashed or timed out
  std::optional<judge::Trace> oracle_trace;
  bool operator==(const Finding&) const = default;
};

nlohmann::json to_json(const Finding&);
// Throws program::JsonError naming the field at fault.
Finding finding_from_json(const nlohmann::json&);

}  // namespace parity::reports
