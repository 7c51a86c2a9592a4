#include "program/json_text.h"

#include <algorithm>
#include <optional>

#include "program/internal_assert.h"

namespace parity::program {

using nlohmann::json;

namespace {

// The offset of the bracket that opens level kMaxJsonDepth + 1, if there is one. A scan of its own rather than
// nlohmann's parser callback, which is told the depth but not where in the text it is. Brackets inside strings
// are text, not nesting.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

// Where nlohmann's parser failed and why. Its SAX interface is told the position of every failure; the
// exception json::parse throws for a number out of range (1e400) does not carry one.
class FailureLocator final : public json::json_sax_t {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t chars_read, const std::string&, const json::exception& e) override {
    position = chars_read;
    why = e.what();
    return false;
  }
  std::optional<std::size_t> position;  // characters read when it failed, the offending one included
  std::string why;
};

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax error ...":
// the place is given in the file's terms instead.
std::string reason(std::string what) {
  if (auto close = what.find("] "); what.starts_with("[json.exception") && close != std::string::npos)
    what = what.substr(close + 2);
  if (auto colon = what.find(": "); what.starts_with("parse error") && colon != std::string::npos)
    what = what.substr(colon + 2);
  return what;
}

}  // namespace

json parse_json_text(std::string_view text, const std::string& origin, std::size_t first_line) {
  auto error_at = [&](std::size_t offset, const std::string& why) {
    offset = std::min(offset, text.size());
    const std::string_view before = text.substr(0, offset);
    const auto line = first_line + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t last_newline = before.rfind('\n');
    const std::size_t line_start = last_newline == std::string_view::npos ? 0 : last_newline + 1;
    return JsonError(origin + ":" + std::to_string(line) + ":" + std::to_string(offset - line_start + 1) +
                     ": malformed JSON: " + why);
  };
  if (auto at = too_deep_at(text))
    throw error_at(*at, "nested deeper than " + std::to_string(kMaxJsonDepth) +
                            " levels, which no parity record is (is it a parity file?)");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    FailureLocator locator;
    json::sax_parse(text, &locator);
    PARITY_HARNESS_ASSERT(locator.position.has_value(),
                          "nlohmann's SAX parser accepts text its DOM parser refused: " + std::string(e.what()));
    throw error_at(*locator.position == 0 ? 0 : *locator.position - 1, reason(locator.why));
  }
}

}  // namespace parity::program
