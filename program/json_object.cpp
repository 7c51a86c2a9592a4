#include "program/json_object.h"

namespace parity::program {

using nlohmann::json;

std::string quote(std::string_view s) {
  std::string cut(s.substr(0, 40));
  std::string out = json(cut).dump(-1, ' ', true, json::error_handler_t::replace);
  if (s.size() > 40) out.insert(out.size() - 1, "...");
  return out;
}

std::string describe(const json& j) {
  if (j.is_array()) return "an array of " + std::to_string(j.size()) + " entries";
  if (j.is_object()) return "an object";
  if (j.is_string()) return "string " + quote(j.get_ref<const std::string&>());
  return std::string(j.type_name()) + " " + j.dump();
}

DType parse_dtype_field(const Obj& o, std::string_view key) {
  std::string name = o.string(key);
  auto d = parse_dtype(name);
  if (!d) {
    // Every dtype a program may name, from the one list of them.
    std::string expected;
    for (std::size_t k = 0; k < std::size(kAllDTypes); ++k)
      expected += (k == 0 ? "" : k + 1 == std::size(kAllDTypes) ? " or " : ", ") + std::string(to_string(kAllDTypes[k]));
    o.fail_field(key, "is " + quote(name) + "; expected " + expected);
  }
  return *d;
}

}  // namespace parity::program
