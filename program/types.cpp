#include "program/types.h"

namespace parity::program {

std::string_view to_string(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::string_view to_string(MemoryFormat m) {
  switch (m) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    case MemoryFormat::Preserve: return "preserve_format";
  }
  return "?";
}

std::string_view to_string(Scalar::Kind k) {
  switch (k) {
    case Scalar::Kind::Int: return "int";
    case Scalar::Kind::Float: return "float";
    case Scalar::Kind::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType d : kAllDTypes)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

std::optional<MemoryFormat> parse_memory_format(std::string_view s) {
  for (MemoryFormat m : kAllMemoryFormats)
    if (to_string(m) == s) return m;
  return std::nullopt;
}

std::optional<Scalar::Kind> parse_scalar_kind(std::string_view s) {
  for (auto k : {Scalar::Kind::Int, Scalar::Kind::Float, Scalar::Kind::Bool})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

}  // namespace parity::program
