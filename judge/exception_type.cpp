#include "judge/exception_type.h"

namespace parity::judge {

namespace {
struct ExceptionName {
  ExceptionType type;
  std::string_view name;
};
constexpr ExceptionName kNames[] = {
#define PARITY_NAME_EXCEPTION(name, str) {ExceptionType::name, str},
    PARITY_EXCEPTION_TYPES(PARITY_NAME_EXCEPTION)
#undef PARITY_NAME_EXCEPTION
};
}  // namespace

std::string_view to_string(ExceptionType t) {
  for (const auto& n : kNames)
    if (n.type == t) return n.name;
  return "other";
}

std::optional<ExceptionType> parse_exception_type(std::string_view s) {
  for (const auto& n : kNames)
    if (n.name == s) return n.type;
  return std::nullopt;
}

}  // namespace parity::judge
