#include "judge/signature.h"

#include <algorithm>

namespace parity::judge {

namespace {

// What detail a kind's signature carries.
enum class DetailForm { None, OptionalCategory, Sides, OptionalBothSides, OptionalSignal };

DetailForm detail_form(DivergenceKind k) {
  switch (k) {
    case DivergenceKind::Status:
    case DivergenceKind::Message: return DetailForm::OptionalCategory;
    case DivergenceKind::ExceptionType: return DetailForm::OptionalCategory;
    case DivergenceKind::ErrorCategory: return DetailForm::Sides;
    case DivergenceKind::GradFn: return DetailForm::OptionalBothSides;
    case DivergenceKind::Crash: return DetailForm::OptionalSignal;
    case DivergenceKind::StepCount:
    case DivergenceKind::ObservedSet:
    case DivergenceKind::Sizes:
    case DivergenceKind::DType:
    case DivergenceKind::Device:
    case DivergenceKind::Strides:
    case DivergenceKind::StridesSize1:
    case DivergenceKind::Offset:
    case DivergenceKind::Alias:
    case DivergenceKind::Identity:
    case DivergenceKind::View:
    case DivergenceKind::Version:
    case DivergenceKind::RequiresGrad:
    case DivergenceKind::IsLeaf:
    case DivergenceKind::RetainsGrad:
    case DivergenceKind::Contiguity:
    case DivergenceKind::Values:
    case DivergenceKind::GradDefined:
    case DivergenceKind::GradSizes:
    case DivergenceKind::GradDType:
    case DivergenceKind::GradAlias:
    case DivergenceKind::GradIdentity:
    case DivergenceKind::GradVersion:
    case DivergenceKind::GradStrides:
    case DivergenceKind::GradStridesSize1:
    case DivergenceKind::GradValues:
    case DivergenceKind::Schema:
    case DivergenceKind::Protocol:
    case DivergenceKind::Timeout:
    case DivergenceKind::OutOfMemory: return DetailForm::None;
  }
  return DetailForm::None;
}

constexpr std::string_view kNone = "none";

std::string_view side_name(const std::optional<ErrorCategory>& c) { return c ? to_string(*c) : kNone; }

// A side's category into `out`, "none" being absent: false when the text is neither.
bool parse_side(std::string_view s, std::optional<ErrorCategory>& out) {
  if (s == kNone) {
    out.reset();
    return true;
  }
  out = parse_error_category(s);
  return out.has_value();
}

// "impl=<side>,oracle=<side>".
std::optional<SideCategories> parse_sides(std::string_view s) {
  constexpr std::string_view impl = "impl=", oracle = ",oracle=";
  if (!s.starts_with(impl)) return std::nullopt;
  s.remove_prefix(impl.size());
  const auto at = s.find(oracle);
  if (at == std::string_view::npos) return std::nullopt;
  SideCategories sides;
  if (!parse_side(s.substr(0, at), sides.impl) || !parse_side(s.substr(at + oracle.size()), sides.oracle))
    return std::nullopt;
  return sides;
}

bool valid_signal(std::string_view s) {
  constexpr std::string_view prefix = "SIG";
  return s.size() > prefix.size() && s.starts_with(prefix) &&
         std::all_of(s.begin() + prefix.size(), s.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); });
}

bool valid_op(std::string_view op) {
  return !op.empty() && std::all_of(op.begin(), op.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string Signature::to_string() const {
  std::string s = op + ":" + std::string(judge::to_string(kind));
  if (const auto* c = std::get_if<ErrorCategory>(&detail)) {
    s += ":" + std::string(judge::to_string(*c));
  } else if (const auto* sides = std::get_if<SideCategories>(&detail)) {
    s += ":impl=" + std::string(side_name(sides->impl)) + ",oracle=" + std::string(side_name(sides->oracle));
  } else if (const auto* signal = std::get_if<Signal>(&detail)) {
    s += ":" + signal->name;
  }
  return s;
}

std::optional<Signature> Signature::parse(std::string_view text) {
  const auto first = text.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::string_view op = text.substr(0, first);
  std::string_view rest = text.substr(first + 1);
  const auto second = rest.find(':');
  const std::string_view kind_text = rest.substr(0, second);
  const std::optional<std::string_view> detail =
      second == std::string_view::npos ? std::nullopt : std::optional(rest.substr(second + 1));

  const auto kind = parse_divergence_kind(kind_text);
  if (!valid_op(op) || !kind) return std::nullopt;
  Signature sig{std::string(op), *kind, {}};
  switch (detail_form(*kind)) {
    case DetailForm::None:
      if (detail) return std::nullopt;
      break;
    case DetailForm::OptionalCategory:
      if (detail) {
        auto c = parse_error_category(*detail);
        if (!c) return std::nullopt;
        sig.detail = *c;
      }
      break;
    case DetailForm::Sides:
    case DetailForm::OptionalBothSides: {
      if (!detail) {
        if (detail_form(*kind) == DetailForm::Sides) return std::nullopt;
        break;
      }
      auto sides = parse_sides(*detail);
      if (!sides) return std::nullopt;
      if (detail_form(*kind) == DetailForm::OptionalBothSides && (!sides->impl || !sides->oracle)) return std::nullopt;
      sig.detail = *sides;
      break;
    }
    case DetailForm::OptionalSignal:
      if (detail) {
        if (!valid_signal(*detail)) return std::nullopt;
        sig.detail = Signal{std::string(*detail)};
      }
      break;
  }
  return sig;
}

bool operator<(const Signature& a, const Signature& b) { return a.to_string() < b.to_string(); }

}  // namespace parity::judge
