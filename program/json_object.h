// Reading a JSON object that came from outside the process (a finding, a journal, a worker's answer): every
// error names where in the document it happened, so a person can find and fix the value. The program codec
// (program/json.h) and the trace codec (judge/trace_json.h) read through it.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "program/json.h"
#include "program/types.h"

namespace parity::program {

// A short, one-line, escaped rendering of a user-provided string for messages.
std::string quote(std::string_view s);

// A short rendering of a JSON value for error messages. Containers are not dumped: hostile files may nest
// deeply enough to exhaust the stack of a recursive dump, or hold megabytes.
std::string describe(const nlohmann::json& j);

// A JSON object being read, with where it sits in the document so every error names its place.
class Obj {
 public:
  Obj(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("must be a JSON object, got " + describe(j_));
  }

  [[noreturn]] void fail(const std::string& what) const { throw JsonError(where_ + ": " + what); }
  [[noreturn]] void fail_field(std::string_view key, const std::string& what) const {
    fail("field \"" + std::string(key) + "\" " + what);
  }
  const std::string& where() const { return where_; }
  void rename(std::string where) { where_ = std::move(where); }

  bool has(std::string_view key) const { return j_.contains(key); }
  const nlohmann::json& raw() const { return j_; }

  const nlohmann::json& at(std::string_view key) const {
    auto it = j_.find(key);
    if (it == j_.end()) fail("missing field \"" + std::string(key) + "\"");
    return *it;
  }

  std::int64_t int64(std::string_view key) const { return to_int64(at(key), key); }

  std::int64_t to_int64(const nlohmann::json& v, std::string_view key) const {
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail_field(key, "is out of the 64-bit integer range: " + describe(v));
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    fail_field(key, "must be an integer, got " + describe(v));
  }

  int int32(std::string_view key) const {
    std::int64_t v = int64(key);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      fail_field(key, "is out of range: " + std::to_string(v));
    return static_cast<int>(v);
  }

  bool boolean(std::string_view key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_boolean()) fail_field(key, "must be true or false, got " + describe(v));
    return v.get<bool>();
  }

  std::string string(std::string_view key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_string()) fail_field(key, "must be a string, got " + describe(v));
    return v.get<std::string>();
  }

  const nlohmann::json& array(std::string_view key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_array()) fail_field(key, "must be an array, got " + describe(v));
    return v;
  }

  std::vector<std::int64_t> ints(std::string_view key, std::size_t max_len) const {
    const nlohmann::json& v = array(key);
    if (v.size() > max_len)
      fail_field(key, "has " + std::to_string(v.size()) + " entries; the limit is " + std::to_string(max_len));
    std::vector<std::int64_t> out;
    out.reserve(v.size());
    for (const nlohmann::json& e : v) out.push_back(to_int64(e, key));
    return out;
  }

  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    for (const nlohmann::json& e : array(key)) {
      if (!e.is_string()) fail_field(key, "must hold strings, got " + describe(e));
      out.push_back(e.get<std::string>());
    }
    return out;
  }

  double number(std::string_view key) const { return to_number(at(key), key); }

  double to_number(const nlohmann::json& v, std::string_view key) const {
    try {
      return number_from_json(v);
    } catch (const JsonError& e) {
      fail_field(key, e.what());
    }
  }

  std::vector<double> numbers(std::string_view key) const {
    const nlohmann::json& v = array(key);
    std::vector<double> out;
    out.reserve(v.size());
    for (const nlohmann::json& e : v) out.push_back(to_number(e, key));
    return out;
  }

 private:
  const nlohmann::json& j_;
  std::string where_;
};

// A dtype field: one of the names program/types.h gives dtypes.
DType parse_dtype_field(const Obj& o, std::string_view key);

}  // namespace parity::program
