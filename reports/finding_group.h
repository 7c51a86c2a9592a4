// A group of findings: every diverging case with one signature (judge::signature), which is one bug however
// often a campaign hits it. run.json lists the groups so that a person reads one line per bug, not per case.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "judge/signature.h"
#include "program/program.h"

namespace parity::reports {

struct FindingGroup {
  std::uint64_t count = 0;       // diverging cases, recorded or not
  bool expected = false;         // matched a known divergence
  std::string known_reason;
  std::uint64_t first_case = 0;  // the lowest case index that hit it
  // The smallest shrunk program among the recorded findings (fewest steps, then lowest case). Absent only when
  // no finding of the group was recorded (a summary merged from shards that recorded none).
  struct Smallest {
    std::uint64_t case_index = 0;
    program::Program program;
    bool operator==(const Smallest&) const = default;
  };
  std::optional<Smallest> smallest;

  // Counts one more diverging case.
  void add_case(std::uint64_t case_index);
  // Offers a recorded finding's (shrunk) program as the smallest.
  void offer(std::uint64_t case_index, const program::Program&);
  // Joins the same signature's group of another shard.
  void merge(const FindingGroup&);
  bool operator==(const FindingGroup&) const = default;
};

using FindingGroups = std::map<judge::Signature, FindingGroup>;  // by signature, in the order of its text

// An array, the unexpected groups first, then by count (most first) and signature.
nlohmann::json to_json(const FindingGroups&);
FindingGroups finding_groups_from_json(const nlohmann::json&);  // throws program::JsonError

}  // namespace parity::reports
