// The JSON Schema of steps' per-op parts (which op names exist, how many inputs and which attributes each takes),
// generated from the op table so that the checked-in reports/schema/ops.schema.json cannot drift from it:
// `parity schema --write reports/schema/ops.schema.json` regenerates it and a unit test compares the two.
#pragma once
#include <string>

namespace parity::program {

// The whole ops.schema.json document, as written to disk (2-space indentation, trailing newline).
std::string step_schema_text();

}  // namespace parity::program
