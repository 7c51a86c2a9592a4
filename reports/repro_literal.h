// Literals in the two repro languages: how the repro printers (reports/repro.h, reports/repro_check.h) write a
// number, a flag, a list or a string so that C++ and Python read back the same value.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parity::reports {

enum class ReproLang { Cpp, Python };

// A float literal that stays a float in both languages (always a decimal point or an exponent); NaN and the
// infinities as expressions.
std::string float_literal(double, ReproLang);
std::string bool_literal(bool, ReproLang);
// A braced (C++) or bracketed (Python) list of the items as `item` writes them.
template <typename T, typename F>
std::string list_literal(const std::vector<T>& v, ReproLang lang, F item) {
  std::string s = lang == ReproLang::Cpp ? "{" : "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + item(v[i]);
  return s + (lang == ReproLang::Cpp ? "}" : "]");
}
std::string int_list(const std::vector<std::int64_t>&, ReproLang);
std::string float_list(const std::vector<double>&, ReproLang);
// A double-quoted string literal: quotes, backslashes and control bytes escaped (octal in C++, where a hex
// escape would swallow the hex digits after it); UTF-8 passes through.
std::string string_literal(std::string_view, ReproLang);

}  // namespace parity::reports
