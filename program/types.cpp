#include "program/types.h"

#include <charconv>
#include <cmath>

#include "program/internal_assert.h"

namespace parity::program {

std::string_view to_string(DType d) {
  switch (d) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Int32: return "int32";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Bool: return "bool";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

bool is_edge_scalar(double v) {
  return !std::isfinite(v) || (v == 0 && std::signbit(v)) || v < kSmallScalarLow || v > kSmallScalarHigh;
}

std::string_view to_string(MemoryFormat m) {
  switch (m) {
    case MemoryFormat::Contiguous: return "contiguous_format";
    case MemoryFormat::ChannelsLast: return "channels_last";
    case MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    case MemoryFormat::Preserve: return "preserve_format";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::string_view to_string(Device d) {
  switch (d) {
    case Device::CPU: return "cpu";
    case Device::CUDA: return "cuda";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::string_view to_string(Scalar::Kind k) {
  switch (k) {
    case Scalar::Kind::Int: return "int";
    case Scalar::Kind::Float: return "float";
    case Scalar::Kind::Bool: return "bool";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
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

std::optional<Device> parse_device(std::string_view s) {
  for (Device d : kAllDevices)
    if (to_string(d) == s) return d;
  return std::nullopt;
}

std::optional<Scalar::Kind> parse_scalar_kind(std::string_view s) {
  for (auto k : {Scalar::Kind::Int, Scalar::Kind::Float, Scalar::Kind::Bool})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

std::string render_ints(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string render_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace parity::program
