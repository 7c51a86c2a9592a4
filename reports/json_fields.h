// Reading typed fields out of report JSON with errors that name the record kind and the field.
#pragma once
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "program/json.h"
#include "reports/schema_version.h"

namespace parity::reports {

inline const nlohmann::json& json_field(const nlohmann::json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) throw program::JsonError(std::string(what) + ": missing field \"" + key + "\"");
  return *it;
}

template <typename T>
T json_typed(const nlohmann::json& j, const char* key, std::string_view what) {
  const nlohmann::json& v = json_field(j, key, what);
  auto wrong = [&](const std::string& why) {
    return program::JsonError(std::string(what) + ": field \"" + key + "\" " + why);
  };
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) throw wrong(std::string("has the wrong type (") + v.type_name() + ")");
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) throw wrong(std::string("has the wrong type (") + v.type_name() + ")");
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw wrong(std::string("has the wrong type (") + v.type_name() + ")");
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw wrong(std::string("has the wrong type (") + v.type_name() + ")");
    if constexpr (std::is_signed_v<T>) {
      if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        throw wrong("is out of range");
    } else if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0) {
      throw wrong("must not be negative");
    }
  } else {
    try {
      return v.get<T>();
    } catch (const nlohmann::json::exception&) {
      throw wrong("has the wrong type");
    }
  }
  return v.get<T>();
}

inline std::uint64_t json_u64(const nlohmann::json& j, const char* key, std::string_view what) {
  try {
    return program::uint64_from_json(json_field(j, key, what));
  } catch (const program::JsonError& e) {
    throw program::JsonError(std::string(what) + ": field \"" + key + "\" " + e.what());
  }
}

// Report records name their schema version; one newer than this parity's cannot be read, nor one older than
// `oldest` (the oldest whose fields this parity can still fill in). Returns the version.
inline std::int64_t check_report_schema_version(const nlohmann::json& j, std::string_view what, int oldest) {
  const auto v = json_typed<std::int64_t>(j, "schema_version", what);
  const std::string mine = std::to_string(kReportSchemaVersion);
  if (v > kReportSchemaVersion)
    throw program::JsonError(std::string(what) + ": schema_version " + std::to_string(v) +
                             " is newer than this parity reads (" + mine + "); update parity");
  if (v < oldest)
    throw program::JsonError(std::string(what) + ": schema_version " + std::to_string(v) +
                             " was written by an older parity; this one reads " +
                             (oldest == kReportSchemaVersion ? "only " + mine : std::to_string(oldest) + " to " + mine) +
                             ": run the campaign again (reports/schema/README.md lists the changes)");
  return v;
}

}  // namespace parity::reports
