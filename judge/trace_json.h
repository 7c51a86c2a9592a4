// JSON codec for traces and divergences (nlohmann/json), as findings, journals and workers' answers hold them.
// Decoding validates what a hostile or truncated file could get wrong and throws program::JsonError naming the
// place.
#pragma once
#include <nlohmann/json.hpp>

#include "judge/compare.h"
#include "judge/trace.h"

namespace parity::judge {

nlohmann::json to_json(const Trace&);
Trace trace_from_json(const nlohmann::json&);  // throws program::JsonError
nlohmann::json to_json(const Divergence&);
Divergence divergence_from_json(const nlohmann::json&);  // throws program::JsonError

}  // namespace parity::judge
