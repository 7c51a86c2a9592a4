// The placeholders of an op's C++ and Python templates (OpSpec::cpp, OpSpec::py): {0}, {1} the operands, {data}
// a rand's seeded contents, {sizes}/{strides}/{offset} a Strided attribute's parts, any other {name} the attribute
// of that name the op reads. One resolver says what each placeholder stands for, and one expander walks a
// template, so that the repro printers (literals, reports/repro.cpp) and the oracle's generated dispatch
// (expressions over a step, oracle/dispatch_gen.cpp) read every template the same way.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "program/attr_spec.h"
#include "program/op_table.h"

namespace parity::program {

struct Placeholder {
  enum class Kind : std::uint8_t {
    Operand,      // {0}, {1}: operand `operand` of the step
    Data,         // {data}: the seeded contents of a rand's storage (program/content.h)
    StridedPart,  // {sizes}, {strides}, {offset} of a Strided attribute: `part` names which
    Attribute,    // {name}: the attribute `attr` of the step
  };
  Kind kind = Kind::Operand;
  int operand = 0;
  std::string_view part;
  const AttrSpec* attr = nullptr;
};

// What `name` stands for in `op`'s templates. A name the op cannot fill (an operand beyond its arity, an attribute
// it does not read) is a bug in the op table: a harness assertion.
Placeholder resolve_placeholder(const OpSpec& op, std::string_view name);

// `text` with every {name} replaced by render(name). Braces around anything but a placeholder name are the
// language's own and stay (a placeholder may sit inside them: `{ {1} }`).
std::string expand_template(std::string_view text, const std::function<std::string(std::string_view)>& render);

}  // namespace parity::program
