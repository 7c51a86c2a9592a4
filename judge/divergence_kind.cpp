#include "judge/divergence_kind.h"

namespace parity::judge {

std::string_view to_string(DivergenceKind k) {
  switch (k) {
#define PARITY_KIND_NAME(name, str) \
  case DivergenceKind::name: return str;
    PARITY_DIVERGENCE_KINDS(PARITY_KIND_NAME)
#undef PARITY_KIND_NAME
  }
  return "?";
}

std::optional<DivergenceKind> parse_divergence_kind(std::string_view s) {
#define PARITY_KIND_PARSE(name, str) \
  if (s == str) return DivergenceKind::name;
  PARITY_DIVERGENCE_KINDS(PARITY_KIND_PARSE)
#undef PARITY_KIND_PARSE
  return std::nullopt;
}

}  // namespace parity::judge
