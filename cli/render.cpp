#include "cli/render.h"

namespace parity::cli {

std::string terminal_safe(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F in UTF-8: terminals read U+009B as CSI, as ESC [.
      const auto c1 = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[c1 >> 4];
      out += kHex[c1 & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string one_line(std::string text, std::size_t max) {
  if (text.size() > max) text = text.substr(0, max) + "...";
  for (char& c : text)
    if (c == '\n' || c == '\t') c = ' ';
  return terminal_safe(text);
}

std::string describe_divergence(const program::Program& p, const judge::Divergence& d, reports::Oracle oracle) {
  return describe_divergence(p, d, "impl", reports::to_string(oracle));
}

std::string describe_divergence(const program::Program& p, const judge::Divergence& d, std::string_view impl_side,
                                std::string_view oracle_side) {
  std::string s = judge::signature(p, d).to_string();
  if (d.step >= 0) {
    s += " at step " + std::to_string(d.step);
    if (static_cast<std::size_t>(d.step) < p.steps.size())
      s += " (" + std::string(program::spec(p.steps[d.step].op).name) + ")";
  }
  if (d.value >= 0) s += ", value v" + std::to_string(d.value);
  if (d.severity == judge::Divergence::Severity::Minor) s += " [minor]";
  s += ": " + std::string(impl_side) + " " + one_line(d.impl, 300) + " | " + std::string(oracle_side) + " " +
       one_line(d.oracle, 300);
  return s;
}

std::string describe_step(const judge::StepObs& s, int step) {
  switch (s.status) {
    case judge::StepObs::Status::Skipped: return "skipped";
    case judge::StepObs::Status::Error: return "error(" + std::string(judge::to_string(s.category)) + ")";
    case judge::StepObs::Status::Ok: break;
  }
  for (const auto& o : s.observed)
    if (o.value == step)
      return "ok " + program::render_ints(o.sizes) + " " + std::string(program::to_string(o.dtype)) + " strides " + program::render_ints(o.strides) +
             (o.requires_grad ? " grad" : "");
  return "ok";
}

}  // namespace parity::cli
