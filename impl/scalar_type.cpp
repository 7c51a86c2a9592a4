#include "impl/scalar_type.h"

#include "impl/error.h"

namespace parity::impl {

std::size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Int32: return 4;
    case ScalarType::Int64: return 8;
    case ScalarType::Float16:
    case ScalarType::BFloat16: return 2;
    case ScalarType::Float32: return 4;
    case ScalarType::Float64: return 8;
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

std::string_view type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "Bool";
    case ScalarType::Int32: return "Int";
    case ScalarType::Int64: return "Long";
    case ScalarType::Float16: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float32: return "Float";
    case ScalarType::Float64: return "Double";
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

std::string_view type_meta_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long int";
    case ScalarType::Float16: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if ((a == ScalarType::Float16 && b == ScalarType::BFloat16) || (a == ScalarType::BFloat16 && b == ScalarType::Float16))
    return ScalarType::Float32;
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace parity::impl
