// Compares two traces of the same program, metadata before values, and returns the first difference.
#pragma once
#include <optional>
#include <string>

#include "program/program.h"
#include "program/trace.h"

namespace parity::program {

struct Divergence {
  enum class Severity { Major, Minor };  // minor: strides differ only in size-1 dims or empty tensors
  int step = -1;       // first differing step
  int value = -1;      // value observed at that step, -1 for the step's own outcome
  std::string kind;    // observation kind: status, error_category, sizes, strides, ..., grad_values
  std::string impl;    // each side's observation, rendered for a person
  std::string oracle;
  Severity severity = Severity::Major;
  bool operator==(const Divergence&) const = default;
};

struct Tolerance {
  double rtol;
  double atol;
};
Tolerance tolerance(DType);

std::optional<Divergence> compare(const Trace& impl, const Trace& oracle);

// Groups findings: "<op>:<kind>[:<category>]", the op being the first differing step's.
std::string signature(const Program&, const Divergence&);

}  // namespace parity::program
