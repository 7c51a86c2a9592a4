#include "generators/program_text.h"

#include <ostream>
#include <sstream>

#include "program/attr_spec.h"

namespace parity::generators {

using program::Attr;

namespace {

void dims(std::ostream& os, const std::vector<std::int64_t>& d) {
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << ']';
}

void scalar(std::ostream& os, const program::Scalar& v) { os << program::to_string(v.kind) << ':' << v.value; }

void attr(std::ostream& os, Attr a, const program::Attrs& at) {
  const program::AttrSpec& spec = program::attr_spec(a);
  os << spec.name << '=';
  switch (spec.type) {
    case program::AttrType::Shape:
    case program::AttrType::IntList: dims(os, at.*spec.ints); break;
    case program::AttrType::Strided:
      dims(os, at.sizes);
      os << '@';
      dims(os, at.strides);
      os << '+' << at.offset;
      break;
    case program::AttrType::Int:
    case program::AttrType::Count:
    case program::AttrType::Memo: os << at.*spec.int64; break;
    case program::AttrType::Bool: os << (at.*spec.flag ? "true" : "false"); break;
    case program::AttrType::Scalar: scalar(os, at.scalar); break;
    case program::AttrType::OptionalScalar:
      if (const auto& bound = at.*spec.bound) scalar(os, *bound);
      else os << "none";
      break;
    case program::AttrType::DType: os << program::to_string(at.dtype); break;
    case program::AttrType::MemoryFormat: os << program::to_string(at.memory_format); break;
    case program::AttrType::Seed: os << at.seed; break;
    case program::AttrType::Device: os << program::to_string(at.device); break;
    case program::AttrType::OptionalDevice:
      if (at.like_device) os << program::to_string(*at.like_device);
      else os << "none";
      break;
    case program::AttrType::Elements:
      os << '[';
      for (std::size_t i = 0; i < at.elements.size(); ++i) {
        if (i) os << ',';
        scalar(os, at.elements[i]);
      }
      os << ']';
      break;
  }
}

}  // namespace

std::string describe(const program::Step& step, int index) {
  std::ostringstream os;
  const program::OpSpec& op = program::spec(step.op);
  if (!op.no_value) os << 'v' << index << " = ";
  os << op.name << '(';
  for (std::size_t i = 0; i < step.inputs.size(); ++i) os << (i ? ", " : "") << 'v' << step.inputs[i];
  os << ')';
  for (Attr a : op.attrs) {
    os << ' ';
    attr(os, a, step.attrs);
  }
  if (!step.grad_enabled) os << " [no_grad]";
  return os.str();
}

std::string describe(const program::Program& p) {
  std::string out;
  for (std::size_t i = 0; i < p.steps.size(); ++i) out += describe(p.steps[i], static_cast<int>(i)) + "\n";
  return out;
}

}  // namespace parity::generators

namespace parity::program {
void showValue(const Program& program, std::ostream& os) { os << "\n" << generators::describe(program); }
void showValue(DType dtype, std::ostream& os) { os << to_string(dtype); }
void showValue(MemoryFormat format, std::ostream& os) { os << to_string(format); }
void showValue(OpId op, std::ostream& os) { os << spec(op).name; }
}  // namespace parity::program
