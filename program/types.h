// Plain data vocabulary shared by programs, traces and both backends. Backends map these to their own types.
#pragma once
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::program {

enum class DType : std::uint8_t { Float32, Float64, Int64, Bool, Int32, Float16, BFloat16 };
enum class MemoryFormat : std::uint8_t { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };
// Where a tensor lives, as a program names it: `cuda` is the current CUDA device (cuda:0), as PyTorch's
// device="cuda" is. Observations keep LibTorch's own text ("cpu", "cuda:0").
enum class Device : std::uint8_t { CPU, CUDA };

inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Int64,   DType::Bool,
                                       DType::Int32,   DType::Float16, DType::BFloat16};
inline constexpr MemoryFormat kAllMemoryFormats[] = {MemoryFormat::Contiguous, MemoryFormat::ChannelsLast,
                                                     MemoryFormat::ChannelsLast3d, MemoryFormat::Preserve};
inline constexpr Device kAllDevices[] = {Device::CPU, Device::CUDA};

std::string_view to_string(DType);
std::string_view to_string(MemoryFormat);
std::string_view to_string(Device);  // "cpu", "cuda"
std::optional<DType> parse_dtype(std::string_view);
std::optional<MemoryFormat> parse_memory_format(std::string_view);
std::optional<Device> parse_device(std::string_view);
inline bool is_floating(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Float16 || d == DType::BFloat16;
}

// A scalar operand as a user writes it: its kind decides type promotion (a Python int vs float literal).
struct Scalar {
  enum class Kind : std::uint8_t { Int, Float, Bool };
  Kind kind = Kind::Float;
  double value = 0.0;
  // The same scalar, bit for bit: NaN is itself (a program holding one equals its copy) and -0 is not 0.
  bool operator==(const Scalar& o) const {
    return kind == o.kind && std::bit_cast<std::uint64_t>(value) == std::bit_cast<std::uint64_t>(o.value);
  }
};
std::string_view to_string(Scalar::Kind);
// The small range scalars are drawn from (generators/attr_gen.cpp). A value outside it, -0 or a non-finite one
// is an edge of some dtype (generators/boundary_values.h): where conversions overflow, signs of zero show, and
// arithmetic meets infinity.
inline constexpr double kSmallScalarLow = -2, kSmallScalarHigh = 3;
bool is_edge_scalar(double);
std::optional<Scalar::Kind> parse_scalar_kind(std::string_view);

// Text for people (messages, traces, reports): "[2, 3]"; the shortest decimal that reads back as the same
// double, or nan/inf/-inf.
std::string render_ints(const std::vector<std::int64_t>&);
std::string render_number(double);
// "a, b, c" with `separator` between the items ("" for none).
template <typename Range>
std::string join(const Range& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace parity::program
