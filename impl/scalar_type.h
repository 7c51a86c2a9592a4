// Element types and PyTorch's type promotion / casting rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "impl/reduced_float.h"

namespace parity::impl {

enum class ScalarType : std::uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

std::size_t element_size(ScalarType);
// PyTorch's spelling in messages: "Float", "Double", "Half", "BFloat16", "Long", "Int", "Bool".
std::string_view type_name(ScalarType);
// caffe2::TypeMeta's spelling, which messages that print a tensor's dtype() use: "float", "long int", "c10::Half".
std::string_view type_meta_name(ScalarType);
inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Float16 || t == ScalarType::BFloat16;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || t == ScalarType::Int32 || (include_bool && t == ScalarType::Bool);
}
// c10::promoteTypes on the types parity covers: bool < int32 < int64 < float16, bfloat16 < float32 < float64, and
// float16 with bfloat16 is float32.
ScalarType promote_types(ScalarType, ScalarType);
// c10::canCast: no floating -> integral, no non-bool -> bool.
bool can_cast(ScalarType from, ScalarType to);
inline constexpr ScalarType kDefaultFloat = ScalarType::Float32;

// Calls f(T{}) with the C++ type of t.
template <typename F>
decltype(auto) dispatch(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Bool: return f(bool{});
    case ScalarType::Int32: return f(std::int32_t{});
    case ScalarType::Int64: return f(std::int64_t{});
    case ScalarType::Float16: return f(Half{});
    case ScalarType::BFloat16: return f(BFloat16{});
    case ScalarType::Float32: return f(float{});
    case ScalarType::Float64: break;
  }
  return f(double{});
}

}  // namespace parity::impl
