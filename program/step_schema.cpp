#include "program/step_schema.h"

#include <nlohmann/json.hpp>

#include "program/op_table.h"

namespace parity::program {

using nlohmann::ordered_json;

std::string step_schema_text() {
  ordered_json names = ordered_json::array();
  ordered_json branches = ordered_json::array();
  for (const OpSpec& op : op_table()) {
    names.push_back(op.name);
    ordered_json attrs;
    if (op.attrs.empty()) {
      attrs = {{"maxProperties", 0}};
    } else {
      ordered_json required = ordered_json::array(), properties = ordered_json::object();
      for (Attr a : op.attrs)
        for (std::string_view key : attr_json_keys(a)) {
          required.push_back(key);
          properties[std::string(key)] = {{"$ref", "common.schema.json#/$defs/attr_" + std::string(key)}};
        }
      attrs = {{"required", required}, {"additionalProperties", false}, {"properties", properties}};
    }
    branches.push_back(
        {{"if", {{"required", {"op"}}, {"properties", {{"op", {{"enum", {op.name}}}}}}}},
         {"then",
          {{"properties", {{"inputs", {{"minItems", op.arity}, {"maxItems", op.arity}}}, {"attrs", attrs}}}}}});
  }
  ordered_json doc = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"$id", "https://parity.invalid/reports/schema/ops.schema.json"},
      {"title", "parity: the op table's part of a step"},
      {"description",
       "Generated from the op table (program/ops.def) by `parity list --schema`; do not edit by hand. A unit test keeps "
       "it equal to the table."},
      {"$defs",
       {{"op_name",
         {{"description", "An op of parity's op table (program/ops.def), as `parity list` prints it."},
          {"enum", names}}},
        {"step_by_op",
         {{"description", "Per op: how many inputs a step has and which attributes, every one the op takes and no "
                          "other ({} for an op that takes none)."},
          {"allOf", branches}}}}}};
  return doc.dump(2) + "\n";
}

}  // namespace parity::program
