// The 16-bit floating types, as c10::Half and c10::BFloat16 store and convert them: a value is rounded to
// nearest-even when made from a float (a double goes through float first, as c10's constructors do), and read
// back exactly as a float. Arithmetic converts to float, so an op computed on them rounds its float result once
// when stored, which is what ATen's CPU kernels do for these types.
//
// Device code (impl/kernels/) uses these types too, so every function is PARITY_HOST_DEVICE and uses bit
// operations rather than <cmath>.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "impl/kernels/host_device.h"

namespace parity::impl {

namespace detail {
PARITY_HOST_DEVICE inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
PARITY_HOST_DEVICE inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// c10::detail::fp16_ieee_from_fp32_value: round to nearest-even through float arithmetic on scaled values.
PARITY_HOST_DEVICE inline std::uint16_t half_from_float(float f) {
  const float scale_to_inf = 0x1.0p+112f;
  const float scale_to_zero = 0x1.0p-110f;
  float base = (bits_float(float_bits(f) & 0x7FFFFFFFu) * scale_to_inf) * scale_to_zero;  // |f|
  const std::uint32_t w = float_bits(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = bits_float((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = float_bits(base);
  const std::uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const std::uint32_t mantissa_bits = bits & 0x00000FFFu;
  const std::uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<std::uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// c10::detail::fp16_ieee_to_fp32_value.
PARITY_HOST_DEVICE inline float half_to_float(std::uint16_t h) {
  const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normalized = bits_float((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = bits_float((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t magnitude = two_w < (1u << 27) ? float_bits(denormalized) : float_bits(normalized);
  return bits_float(sign | magnitude);
}

// c10::detail::round_to_nearest_even; NaN becomes the canonical quiet NaN.
PARITY_HOST_DEVICE inline std::uint16_t bfloat16_from_float(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;  // NaN
  return static_cast<std::uint16_t>((u + (((u >> 16) & 1u) + 0x7FFFu)) >> 16);
}
PARITY_HOST_DEVICE inline float bfloat16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }
}  // namespace detail

template <std::uint16_t (*FromFloat)(float), float (*ToFloat)(std::uint16_t)>
struct ReducedFloat {
  std::uint16_t bits = 0;
  ReducedFloat() = default;
  // Implicit, as c10's: any arithmetic value converts through float.
  template <typename V, typename = std::enable_if_t<std::is_arithmetic_v<V>>>
  PARITY_HOST_DEVICE ReducedFloat(V v) : bits(FromFloat(static_cast<float>(v))) {}
  // From the other 16-bit type: through float, as ATen's copy does.
  template <std::uint16_t (*F)(float), float (*T)(std::uint16_t)>
  PARITY_HOST_DEVICE explicit ReducedFloat(ReducedFloat<F, T> o) : bits(FromFloat(static_cast<float>(o))) {}
  PARITY_HOST_DEVICE operator float() const { return ToFloat(bits); }
};

using Half = ReducedFloat<detail::half_from_float, detail::half_to_float>;
using BFloat16 = ReducedFloat<detail::bfloat16_from_float, detail::bfloat16_to_float>;

// Floating element types, the 16-bit ones included (std::is_floating_point does not know them).
template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace parity::impl
