// Which backend judges a campaign's impl side: LibTorch (every campaign's, by default), or impl itself on the CPU
// (`parity fuzz --device cuda --oracle impl-cpu`): the same impl with its cuda tensors in host memory
// (impl/cuda/cuda_runtime.h), so that impl's device kernels, launches and transfers are compared with what its
// CPU executor computes, under the same device rules. Recorded in run.json, each finding and the journal, so that
// a replay is judged by the same oracle.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "judge/trace.h"

namespace parity::reports {

enum class Oracle { LibTorch, ImplCpu };

std::string_view to_string(Oracle o);  // "libtorch", "impl-cpu": the flag's and the JSON's spelling
std::optional<Oracle> parse_oracle(std::string_view s);
// The oracle side's name in reports and messages: "LibTorch", "impl on the CPU".
std::string_view oracle_name(Oracle o);
// What a repro may print as the expected values: the judge's trace when LibTorch judged (the repros run on it),
// nothing when impl did, whose values are no expectation of LibTorch's.
const judge::Trace* repro_expectations(Oracle o, const std::optional<judge::Trace>& judge_trace);
// Who judged, as a repro's title names it: "LibTorch 2.15.0", "impl on the CPU".
std::string judge_title(Oracle o, std::string_view libtorch_version);

// A record's "oracle" field (run.json, a finding, the journal's campaign); absent (written before version 6 of
// the reports, reports/schema_version.h): LibTorch, the only oracle then. Throws program::JsonError naming `what`.
Oracle oracle_field(const nlohmann::json& record, std::string_view what);

}  // namespace parity::reports
