// The one strided loop every CPU kernel uses: visits each index of `shape` in row-major order and passes the
// element offset of every operand (strides in elements; a broadcast dim has stride 0). Adjacent dims that
// every operand walks as one are merged first, and the innermost dim runs as a plain loop.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "impl/error.h"

namespace parity::impl::cpu {

template <typename F>
void for_each_offset(const std::vector<std::int64_t>& shape,
                     std::initializer_list<const std::vector<std::int64_t>*> strides, F&& f) {
  constexpr std::size_t kMax = 4;
  constexpr std::size_t kMaxDims = 64;
  const std::size_t n = strides.size();
  PARITY_INTERNAL_ASSERT(n <= kMax, "for_each_offset walks at most " + std::to_string(kMax) + " operands, got " +
                                        std::to_string(n));
  PARITY_INTERNAL_ASSERT(shape.size() <= kMaxDims, "for_each_offset walks at most " + std::to_string(kMaxDims) +
                                                       " dims, got " + std::to_string(shape.size()));
  for (auto s : shape)
    if (s == 0) return;
  // Coalesce: dim d merges into d+1 when every operand steps over d exactly as over a whole run of d+1.
  std::array<std::int64_t, kMaxDims> sz{};
  std::array<std::array<std::int64_t, kMaxDims>, kMax> st{};
  std::size_t nd = 0;
  {
    std::size_t k = 0;
    std::array<const std::vector<std::int64_t>*, kMax> in{};
    for (auto* s : strides) in[k++] = s;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      bool merge = nd > 0;
      for (std::size_t i = 0; merge && i < n; ++i) merge = st[i][nd - 1] == shape[d] * (*in[i])[d];
      if (merge) {
        sz[nd - 1] *= shape[d];
        for (std::size_t i = 0; i < n; ++i) st[i][nd - 1] = (*in[i])[d];
      } else {
        sz[nd] = shape[d];
        for (std::size_t i = 0; i < n; ++i) st[i][nd] = (*in[i])[d];
        ++nd;
      }
    }
  }
  std::array<std::int64_t, kMax> off{};
  if (nd == 0) {
    f(off.data());
    return;
  }
  const std::size_t last = nd - 1;
  std::array<std::int64_t, kMaxDims> idx{};
  while (true) {
    for (std::int64_t k = 0; k < sz[last]; ++k) {
      f(off.data());
      for (std::size_t i = 0; i < n; ++i) off[i] += st[i][last];
    }
    for (std::size_t i = 0; i < n; ++i) off[i] -= st[i][last] * sz[last];
    std::size_t d = last;
    while (true) {
      if (d == 0) return;
      --d;
      if (++idx[d] < sz[d]) {
        for (std::size_t i = 0; i < n; ++i) off[i] += st[i][d];
        break;
      }
      for (std::size_t i = 0; i < n; ++i) off[i] -= st[i][d] * (sz[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace parity::impl::cpu
