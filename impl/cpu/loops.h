// The one strided loop every CPU kernel uses: visits each index of `shape` in row-major order and passes the
// element offset of every operand (strides in elements; a broadcast dim has stride 0).
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace parity::impl::cpu {

template <typename F>
void for_each_offset(const std::vector<std::int64_t>& shape,
                     std::initializer_list<const std::vector<std::int64_t>*> strides, F&& f) {
  constexpr std::size_t kMax = 4;
  const std::size_t n = strides.size();
  std::array<const std::vector<std::int64_t>*, kMax> st{};
  std::size_t k = 0;
  for (auto* s : strides) st[k++] = s;
  for (auto s : shape)
    if (s == 0) return;
  const std::size_t nd = shape.size();
  std::vector<std::int64_t> idx(nd, 0);
  std::array<std::int64_t, kMax> off{};
  while (true) {
    f(off.data());
    std::size_t d = nd;
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) {
        for (std::size_t i = 0; i < n; ++i) off[i] += (*st[i])[d];
        break;
      }
      for (std::size_t i = 0; i < n; ++i) off[i] -= (*st[i])[d] * (shape[d] - 1);
      idx[d] = 0;
      if (d == 0) return;
    }
    if (nd == 0) return;
  }
}

}  // namespace parity::impl::cpu
