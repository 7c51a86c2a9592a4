#include "cli/render.h"

namespace parity::cli {

std::string one_line(std::string text, std::size_t max) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  if (text.size() > max) text = text.substr(0, max) + "...";
  return text;
}

std::string describe_divergence(const program::Program& p, const program::Divergence& d) {
  std::string s = program::signature(p, d).to_string();
  if (d.step >= 0) {
    s += " at step " + std::to_string(d.step);
    if (static_cast<std::size_t>(d.step) < p.steps.size())
      s += " (" + std::string(program::spec(p.steps[d.step].op).name) + ")";
  }
  if (d.value >= 0) s += ", value v" + std::to_string(d.value);
  if (d.severity == program::Divergence::Severity::Minor) s += " [minor]";
  s += ": impl " + one_line(d.impl, 300) + " | libtorch " + one_line(d.oracle, 300);
  return s;
}

std::string describe_step(const program::StepObs& s, int step) {
  switch (s.status) {
    case program::StepObs::Status::Skipped: return "skipped";
    case program::StepObs::Status::Error: return "error(" + std::string(program::to_string(s.category)) + ")";
    case program::StepObs::Status::Ok: break;
  }
  for (const auto& o : s.observed)
    if (o.value == step)
      return "ok " + program::render_ints(o.sizes) + " " + std::string(program::to_string(o.dtype)) + " strides " + program::render_ints(o.strides) +
             (o.requires_grad ? " grad" : "");
  return "ok";
}

}  // namespace parity::cli
