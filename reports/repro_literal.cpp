#include "reports/repro_literal.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace parity::reports {

std::string float_literal(double v, ReproLang lang) {
  const bool cpp = lang == ReproLang::Cpp;
  if (std::isnan(v)) return cpp ? "std::numeric_limits<double>::quiet_NaN()" : "float('nan')";
  if (std::isinf(v)) {
    if (cpp) return v > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
    return v > 0 ? "float('inf')" : "-float('inf')";
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string bool_literal(bool b, ReproLang lang) {
  if (lang == ReproLang::Cpp) return b ? "true" : "false";
  return b ? "True" : "False";
}

std::string int_list(const std::vector<std::int64_t>& v, ReproLang lang) {
  return list_literal(v, lang, [](std::int64_t x) { return std::to_string(x); });
}

std::string float_list(const std::vector<double>& v, ReproLang lang) {
  return list_literal(v, lang, [lang](double x) { return float_literal(x, lang); });
}

std::string string_literal(std::string_view s, ReproLang lang) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      // Bytes from 0x80 on pass through: LibTorch's messages are UTF-8, as both languages read their sources.
      char buf[8];
      std::snprintf(buf, sizeof buf, lang == ReproLang::Cpp ? "\\%03o" : "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace parity::reports
