#include "reports/oracle.h"

#include "program/internal_assert.h"
#include "reports/json_fields.h"

namespace parity::reports {

std::string_view to_string(Oracle o) {
  switch (o) {
    case Oracle::LibTorch: return "libtorch";
    case Oracle::ImplCpu: return "impl-cpu";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::optional<Oracle> parse_oracle(std::string_view s) {
  for (Oracle o : {Oracle::LibTorch, Oracle::ImplCpu})
    if (to_string(o) == s) return o;
  return std::nullopt;
}

std::string_view oracle_name(Oracle o) {
  switch (o) {
    case Oracle::LibTorch: return "LibTorch";
    case Oracle::ImplCpu: return "impl on the CPU";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

const judge::Trace* repro_expectations(Oracle o, const std::optional<judge::Trace>& judge_trace) {
  return o == Oracle::LibTorch && judge_trace ? &*judge_trace : nullptr;
}

std::string judge_title(Oracle o, std::string_view libtorch_version) {
  if (o == Oracle::ImplCpu) return std::string(oracle_name(o));
  return "LibTorch" + (libtorch_version.empty() ? std::string() : " " + std::string(libtorch_version));
}

Oracle oracle_field(const nlohmann::json& record, std::string_view what) {
  if (!record.contains("oracle")) return Oracle::LibTorch;
  const auto o = parse_oracle(json_typed<std::string>(record, "oracle", what));
  if (!o) throw program::JsonError(std::string(what) + ": field \"oracle\" must be \"libtorch\" or \"impl-cpu\"");
  return *o;
}

}  // namespace parity::reports
