// JSON text that comes from outside the process (files, worker answers), parsed in one place: nesting is
// bounded before nlohmann builds anything, and every failure names the origin, line and column.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "program/json.h"

namespace parity::program {

// No record parity writes nests deeper than about a dozen levels. nlohmann copies, dumps and compares values
// recursively, so a hostile document nested 100,000 levels deep would overflow the stack after parsing.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses `text`, whose first line is line `first_line` of `origin` (a file name, or what sent the text).
// Throws JsonError "ORIGIN:LINE:COLUMN: malformed JSON: why" for a syntax error, a number out of double's
// range (1e400) or nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_text(std::string_view text, const std::string& origin, std::size_t first_line = 1);

}  // namespace parity::program
