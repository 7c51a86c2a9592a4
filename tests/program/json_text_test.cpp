// program::parse_json_text: nesting is bounded before anything is built, and every failure (syntax, a number
// out of range, nesting) names the origin, line and column.
#include <gtest/gtest.h>

#include <string>

#include "program/json_text.h"

namespace parity::program {
namespace {

std::string error_of(std::string_view text, std::size_t first_line = 1) {
  try {
    parse_json_text(text, "in.json", first_line);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "(parsed)";
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonText, NestingUpToTheLimitParses) {
  const nlohmann::json j = parse_json_text(nested(kMaxJsonDepth), "in.json");
  EXPECT_TRUE(j.is_array());
}

TEST(JsonText, NestingPastTheLimitIsRefusedWhereItHappens) {
  const std::string column = std::to_string(kMaxJsonDepth + 1);
  const std::string why = "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  EXPECT_EQ(error_of(nested(kMaxJsonDepth + 1)).rfind("in.json:1:" + column + ": " + why, 0), 0u)
      << error_of(nested(kMaxJsonDepth + 1));
  // What made `parity merge` overflow its stack: 100,000 levels, refused like any other.
  EXPECT_EQ(error_of("{\"a\": 1}\n" + nested(100000)).rfind("in.json:2:" + column + ": " + why, 0), 0u);
  // Objects count as arrays do.
  std::string objects;
  for (std::size_t i = 0; i <= kMaxJsonDepth; ++i) objects += "{\"k\": ";
  EXPECT_NE(error_of(objects).find("nested deeper"), std::string::npos) << error_of(objects);
}

TEST(JsonText, BracketsInStringsAreNotNesting) {
  const std::string text = "{\"message\": \"" + std::string(1000, '[') + "\\\"{{{\"}";
  EXPECT_EQ(parse_json_text(text, "in.json")["message"], std::string(1000, '[') + "\"{{{");
}

TEST(JsonText, ANumberOutOfRangeNamesItsPlace) {
  EXPECT_EQ(error_of("{\"a\": [1,\n  1e400]}"), "in.json:2:7: malformed JSON: number overflow parsing '1e400'");
}

TEST(JsonText, SyntaxErrorsNameTheLineCountedFromTheFirst) {
  EXPECT_EQ(error_of("{oops}", 7).rfind("in.json:7:2: malformed JSON: syntax error", 0), 0u) << error_of("{oops}", 7);
  EXPECT_EQ(error_of("").rfind("in.json:1:1: malformed JSON: syntax error", 0), 0u) << error_of("");
}

}  // namespace
}  // namespace parity::program
