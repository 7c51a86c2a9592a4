#include "program/aten_schema.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "program/internal_assert.h"
#include "program/op_table.h"

namespace parity::program {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[noreturn]] void malformed(std::string_view text, const std::string& why) {
  throw std::invalid_argument("ATen schema `" + std::string(text) + "`: " + why);
}

// Splits at commas outside parentheses and brackets (defaults such as `int[2] dims=[0, 1]`).
std::vector<std::string_view> split_top_level(std::string_view list, std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') {
      if (--depth < 0) malformed(text, "unbalanced `" + std::string(1, c) + "`");
    }
    if (c == ',' && depth == 0) {
      parts.push_back(trim(list.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0) malformed(text, "unbalanced brackets");
  if (!trim(list.substr(start)).empty() || !parts.empty()) parts.push_back(trim(list.substr(start)));
  return parts;
}

// `Tensor(a!) self`, `Scalar alpha=1`, `Tensor(a)[]`, `int[1]? dim`, a return `Tensor(a) values`.
SchemaValue parse_value(std::string_view item, bool named, std::string_view text) {
  SchemaValue v;
  if (const auto eq = item.find('='); eq != std::string_view::npos) item = trim(item.substr(0, eq));
  std::string rest(item);
  if (const auto open = item.find('('); open != std::string_view::npos) {
    const auto close = item.find(')', open);
    if (close == std::string_view::npos) malformed(text, "annotation of `" + std::string(item) + "` is not closed");
    std::string_view annotation = trim(item.substr(open + 1, close - open - 1));
    if (const auto arrow = annotation.find("->"); arrow != std::string_view::npos)
      annotation = trim(annotation.substr(0, arrow));  // the set of the contained elements is not read
    if (annotation.ends_with('!')) {
      v.writes = true;
      annotation.remove_suffix(1);
    }
    if (annotation.empty()) malformed(text, "empty alias annotation in `" + std::string(item) + "`");
    v.alias_set = std::string(annotation);
    rest = std::string(item.substr(0, open)) + std::string(item.substr(close + 1));
  }
  const std::string_view base = trim(rest);
  const auto space = base.rfind(' ');
  if (space != std::string_view::npos) {
    v.name = std::string(base.substr(space + 1));
    v.type = std::string(trim(base.substr(0, space)));
  } else if (named) {
    malformed(text, "argument `" + std::string(item) + "` has no name");
  } else {
    v.type = std::string(base);
  }
  if (v.type.empty()) malformed(text, "`" + std::string(item) + "` has no type");
  return v;
}

// Parsed once per process; a schema text the parser refuses is a bug in the op table.
const std::vector<std::optional<AtenSchema>>& parsed() {
  static const auto table = [] {
    std::vector<std::optional<AtenSchema>> t(op_table().size());
    for (const OpSpec& op : op_table()) {
      if (op.schema.empty()) continue;
      try {
        t[static_cast<std::size_t>(op.id)] = parse_aten_schema(op.schema);
      } catch (const std::invalid_argument& e) {
        PARITY_HARNESS_UNREACHABLE("op `" + std::string(op.name) + "`: " + e.what());
      }
    }
    return t;
  }();
  return table;
}

}  // namespace

const SchemaValue* AtenSchema::tensor_argument(std::size_t i) const {
  // An out= overload's written arguments come first, as ATen's C++ API takes them (at::add_out(out, self, other)).
  // It is one with written keyword-only tensors, whatever its overload's name ("out", "Tensor_out"): torchgen's
  // SchemaKind.out.
  const bool out_first = std::any_of(arguments.begin(), arguments.end(),
                                     [](const SchemaValue& a) { return a.tensor() && a.writes && a.keyword_only; });
  if (out_first)
    for (const SchemaValue& a : arguments)
      if (a.tensor() && a.writes && i-- == 0) return &a;
  for (const SchemaValue& a : arguments)
    if (a.tensor() && !(out_first && a.writes) && i-- == 0) return &a;
  return nullptr;
}

const SchemaValue* AtenSchema::return_aliasing(const SchemaValue& argument) const {
  if (argument.alias_set.empty()) return nullptr;
  for (const SchemaValue& r : returns)
    if (r.alias_set == argument.alias_set) return &r;
  return nullptr;
}

AtenSchema parse_aten_schema(std::string_view text) {
  AtenSchema s;
  const auto open = text.find('(');
  const auto arrow = text.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos || arrow < open)
    malformed(text, "expected `name(arguments) -> returns`");
  const auto close = text.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) malformed(text, "the argument list is not closed");
  std::string_view qualified = trim(text.substr(0, open));
  if (!qualified.starts_with("aten::")) malformed(text, "the name is not in the aten namespace");
  if (const auto dot = qualified.find('.'); dot != std::string_view::npos) {
    s.overload = std::string(qualified.substr(dot + 1));
    qualified = qualified.substr(0, dot);
  }
  s.name = std::string(qualified);
  bool keyword_only = false;
  for (std::string_view item : split_top_level(text.substr(open + 1, close - open - 1), text)) {
    if (item == "*") {
      keyword_only = true;
      continue;
    }
    s.arguments.push_back(parse_value(item, true, text));
    s.arguments.back().keyword_only = keyword_only;
  }
  std::string_view returns = trim(text.substr(arrow + 2));
  if (returns.starts_with('(') && returns.ends_with(')') && !returns.starts_with("()"))
    returns = returns.substr(1, returns.size() - 2);  // a tuple of returns
  if (returns != "()")
    for (std::string_view item : split_top_level(returns, text)) s.returns.push_back(parse_value(item, false, text));
  return s;
}

const AtenSchema* aten_schema(OpId id) {
  const auto& entry = parsed()[static_cast<std::size_t>(id)];
  return entry ? &*entry : nullptr;
}

}  // namespace parity::program
