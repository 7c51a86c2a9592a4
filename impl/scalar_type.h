// Element types and PyTorch's type promotion / casting rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parity::impl {

enum class ScalarType : std::uint8_t { Bool, Int32, Int64, Float32, Float64 };

std::size_t element_size(ScalarType);
std::string_view type_name(ScalarType);  // PyTorch's spelling in messages: "Float", "Double", "Long", "Int", "Bool"
inline bool is_floating(ScalarType t) { return t == ScalarType::Float32 || t == ScalarType::Float64; }
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || t == ScalarType::Int32 || (include_bool && t == ScalarType::Bool);
}
// Lattice bool < int32 < int64 < float32 < float64 (the subset of c10::promoteTypes parity covers).
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
    case ScalarType::Float32: return f(float{});
    case ScalarType::Float64: break;
  }
  return f(double{});
}

}  // namespace parity::impl
