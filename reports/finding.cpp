#include "reports/finding.h"

#include "judge/trace_json.h"
#include "program/json.h"
#include "reports/json_fields.h"
#include "reports/schema_version.h"

namespace parity::reports {

using nlohmann::json;
using program::JsonError;

namespace {

constexpr std::string_view kWhat = "finding";
const json& field(const json& j, const char* key) { return json_field(j, key, kWhat); }
template <typename T>
T typed(const json& j, const char* key) {
  return json_typed<T>(j, key, kWhat);
}
std::uint64_t u64(const json& j, const char* key) { return json_u64(j, key, kWhat); }


std::optional<judge::Trace> optional_trace(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return judge::trace_from_json(*it);
}

}  // namespace

json to_json(const Finding& f) {
  return {{"schema_version", kReportSchemaVersion},
          {"kind", "finding"},
          {"parity_commit", f.parity_commit},
          {"generator_version", f.generator_version},
          {"libtorch_version", f.libtorch_version},
          {"device", f.device},
          {"oracle", to_string(f.oracle)},
          {"impl_command", f.impl_command},
          {"oracle_command", f.oracle_command},
          {"planted_faults", f.planted_faults},
          {"seed", program::uint64_to_json(f.seed)},
          {"case_index", program::uint64_to_json(f.case_index)},
          {"case_seed", program::uint64_to_json(f.case_seed)},
          {"size", f.size},
          {"origin", to_string(f.origin)},
          {"signature", f.signature.to_string()},
          {"severity", judge::to_string(f.severity)},
          {"expected", f.expected},
          {"known_reason", f.known_reason},
          {"reproducible", f.reproducible ? json{{"runs", f.reproducible->runs},
                                                 {"diverged", f.reproducible->diverged},
                                                 {"flaky", f.reproducible->flaky()}}
                                          : json(nullptr)},
          {"program", program::to_json(f.program)},
          {"original_program_size", f.original_program_size},
          {"shrink_evaluations", f.shrink_evaluations},
          {"divergence", judge::to_json(f.divergence)},
          {"impl_trace", f.impl_trace ? judge::to_json(*f.impl_trace) : json(nullptr)},
          {"oracle_trace", f.oracle_trace ? judge::to_json(*f.oracle_trace) : json(nullptr)}};
}

Finding finding_from_json(const json& j) {
  if (!j.is_object()) throw JsonError("finding: must be a JSON object");
  const std::int64_t version = check_report_schema_version(j, kWhat, 1);
  if (typed<std::string>(j, "kind") != "finding")
    throw JsonError("finding: field \"kind\" must be \"finding\"");
  Finding f;
  f.parity_commit = typed<std::string>(j, "parity_commit");
  f.generator_version = typed<int>(j, "generator_version");
  f.libtorch_version = typed<std::string>(j, "libtorch_version");
  f.device = typed<std::string>(j, "device");
  f.oracle = oracle_field(j, "finding");
  // Absent from findings made before protocol backends: both sides in process.
  if (j.contains("impl_command")) f.impl_command = json_typed<std::string>(j, "impl_command", "finding");
  if (j.contains("oracle_command")) f.oracle_command = json_typed<std::string>(j, "oracle_command", "finding");
  if (version >= 2) f.planted_faults = typed<std::vector<std::string>>(j, "planted_faults");  // new in 2
  f.seed = u64(j, "seed");
  f.case_index = u64(j, "case_index");
  f.case_seed = u64(j, "case_seed");
  f.size = typed<int>(j, "size");
  // Absent before version 9: every case was generated.
  if (version >= 9) {
    const auto origin = parse_case_origin(typed<std::string>(j, "origin"));
    if (!origin) throw JsonError("finding: field \"origin\" must be \"generated\", \"mutated\" or \"corpus\"");
    f.origin = *origin;
  }
  const std::string signature = typed<std::string>(j, "signature");
  if (auto s = judge::Signature::parse(signature)) f.signature = std::move(*s);
  else throw JsonError("finding: field \"signature\" (" + signature.substr(0, 80) + ") is not a signature");
  f.expected = typed<bool>(j, "expected");
  f.known_reason = typed<std::string>(j, "known_reason");
  // Absent from findings written before confirmation existed: they were not confirmed.
  if (auto r = j.find("reproducible"); r != j.end() && !r->is_null()) {
    const std::string what = std::string(kWhat) + ": reproducible";
    Finding::Reproducibility rep{json_typed<int>(*r, "runs", what), json_typed<int>(*r, "diverged", what)};
    if (rep.runs < 1 || rep.diverged < 0 || rep.diverged > rep.runs)
      throw JsonError("finding: field \"reproducible\" needs 0 <= diverged <= runs and runs >= 1");
    if (json_typed<bool>(*r, "flaky", what) != rep.flaky())
      throw JsonError("finding: field \"reproducible.flaky\" disagrees with its counts");
    f.reproducible = rep;
  }
  try {
    f.program = program::program_from_json(field(j, "program"));
  } catch (const JsonError& e) {
    throw JsonError(std::string("finding: ") + e.what());
  }
  f.original_program_size = typed<std::size_t>(j, "original_program_size");
  f.shrink_evaluations = typed<int>(j, "shrink_evaluations");
  f.divergence = judge::divergence_from_json(field(j, "divergence"));
  f.severity = f.divergence.severity;
  std::string severity = typed<std::string>(j, "severity");
  if (severity != judge::to_string(f.severity))
    throw JsonError("finding: field \"severity\" (" + severity.substr(0, 20) + ") disagrees with the divergence's");
  f.impl_trace = optional_trace(j, "impl_trace");
  f.oracle_trace = optional_trace(j, "oracle_trace");
  return f;
}

}  // namespace parity::reports
