#include "generators/program_text.h"

#include <ostream>
#include <sstream>

namespace parity::generators {

using program::Attr;

namespace {

void dims(std::ostream& os, const std::vector<std::int64_t>& d) {
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << ']';
}

void attr(std::ostream& os, Attr a, const program::Attrs& at) {
  os << program::attr_name(a) << '=';
  switch (a) {
    case Attr::Sizes:
    case Attr::ViewSizes:
    case Attr::ExpandSizes: dims(os, at.sizes); break;
    case Attr::Strided:
      dims(os, at.sizes);
      os << '@';
      dims(os, at.strides);
      os << '+' << at.offset;
      break;
    case Attr::Dims: dims(os, at.dims); break;
    case Attr::Dim: os << at.dim; break;
    case Attr::Dim1: os << at.dim1; break;
    case Attr::Start: os << at.start; break;
    case Attr::End: os << at.end; break;
    case Attr::Step: os << at.step; break;
    case Attr::Index: os << at.index; break;
    case Attr::Length: os << at.length; break;
    case Attr::Scalar: os << program::to_string(at.scalar.kind) << ':' << at.scalar.value; break;
    case Attr::MemoryFormat: os << program::to_string(at.memory_format); break;
    case Attr::DType: os << program::to_string(at.dtype); break;
    case Attr::RequiresGrad: os << (at.requires_grad ? "true" : "false"); break;
    case Attr::Keepdim: os << (at.keepdim ? "true" : "false"); break;
    case Attr::RetainGraph: os << (at.retain_graph ? "true" : "false"); break;
    case Attr::Seed: os << at.seed; break;
    case Attr::Offset: os << at.offset; break;
    case Attr::Min:
    case Attr::Max: {
      const auto& bound = a == Attr::Min ? at.min : at.max;
      if (bound) os << program::to_string(bound->kind) << ':' << bound->value;
      else os << "none";
      break;
    }
    case Attr::Size: os << at.size; break;
    case Attr::Chunks: os << at.chunks; break;
    case Attr::Copy: os << (at.copy ? "true" : "false"); break;
    case Attr::Memo: os << at.memo; break;
  }
}

}  // namespace

std::string describe(const program::Step& step, int index) {
  std::ostringstream os;
  const program::OpSpec& op = program::spec(step.op);
  if (!(op.flags & program::kNoValue)) os << 'v' << index << " = ";
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
