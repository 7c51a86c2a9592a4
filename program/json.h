// JSON codec for programs (nlohmann/json); judge/trace_json.h holds the one for traces and divergences. Decoding validates everything a hostile
// or truncated file could get wrong and throws JsonError with a message a person can act on.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "program/program.h"

namespace parity::program {

inline constexpr int kSchemaVersion = 1;

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Limits that keep a replayed program from exhausting the machine.
inline constexpr std::int64_t kMaxNumel = 1 << 20;
inline constexpr std::size_t kMaxDims = 8;
inline constexpr std::size_t kMaxSteps = 4096;

// Whether `step`'s int-list attributes are within kMaxDims, so that program_from_json reads back what to_json
// writes of it. The generator makes only such steps: a finding must replay, and a worker reads its cases as JSON.
bool within_dims_limit(const Step& step);
// Whether a tensor of `sizes` is within kMaxNumel elements (negative sizes count as none, down to -kMaxNumel), so
// that a program making it reads back: the generator makes no step whose result is past it.
bool within_numel_limit(const std::vector<std::int64_t>& sizes);

nlohmann::json to_json(const Program&);
Program program_from_json(const nlohmann::json&);  // throws JsonError
// Step `index` of a program, alone (a protocol backend's request: docs/backend-protocol.md): its inputs must name
// earlier values. Throws JsonError.
Step step_from_json(const nlohmann::json&, int index);

// Unsigned 64-bit integers (seeds) are written as numbers up to 2^53, above as decimal strings, since many JSON
// tools hold numbers as doubles; both forms are read.
nlohmann::json uint64_to_json(std::uint64_t);
std::uint64_t uint64_from_json(const nlohmann::json&);  // throws JsonError

// Doubles that JSON cannot hold (NaN, +-Inf) are written as the strings "nan", "inf", "-inf".
nlohmann::json number_to_json(double);
double number_from_json(const nlohmann::json&);

}  // namespace parity::program
