#include "program/op_template.h"

#include <charconv>

#include "program/internal_assert.h"

namespace parity::program {

Placeholder resolve_placeholder(const OpSpec& op, std::string_view name) {
  Placeholder p;
  if (!name.empty() && name.find_first_not_of("0123456789") == std::string_view::npos) {
    std::from_chars(name.data(), name.data() + name.size(), p.operand);
    if (p.operand >= op.arity)
      PARITY_HARNESS_UNREACHABLE("template of " + std::string(op.name) + " uses operand {" + std::string(name) +
                                 "} beyond its arity");
    return p;
  }
  if (name == "data" && op.reads(Attr::Strided)) {
    p.kind = Placeholder::Kind::Data;
    return p;
  }
  if (op.reads(Attr::Strided) && (name == "sizes" || name == "strides" || name == "offset")) {
    p.kind = Placeholder::Kind::StridedPart;
    p.part = name;
    return p;
  }
  for (Attr attr : op.attrs) {
    const AttrSpec& as = attr_spec(attr);
    if (as.name != name || as.type == AttrType::Strided) continue;
    p.kind = Placeholder::Kind::Attribute;
    p.attr = &as;
    return p;
  }
  PARITY_HARNESS_UNREACHABLE("template of " + std::string(op.name) + " has unknown placeholder {" +
                             std::string(name) + "}");
}

std::string expand_template(std::string_view text, const std::function<std::string(std::string_view)>& render) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 1, close - open - 1);
    out += text.substr(i, open - i);
    if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") == std::string_view::npos) {
      out += render(name);
      i = close + 1;
    } else {
      out += '{';  // the language's own brace; a placeholder may follow inside it (`{ {1} }`)
      i = open + 1;
    }
  }
  out += text.substr(i);
  return out;
}

}  // namespace parity::program
