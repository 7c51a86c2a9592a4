// The CPU executor of impl/kernels: applies a pointwise functor at every index of a call's geometry, on this
// thread. The functor's operator() says the operands' element types (the output's is its return type, each
// input's its parameter's). Fast paths, all computing each element exactly as the generic loop would:
//   - a run whose operands are all contiguous or broadcast (stride 1 or 0, the output's 1) is a plain loop with
//     the broadcast operands fixed at compile time, which the compiler vectorises;
//   - a one-input map whose input walks memory along another dim than the output (a transpose, a memory-format
//     conversion) copies in square tiles, so that both sides stay in cache.
// Compiled once per CPU capability (impl/cpu/capability.h) so that the vectorised loops use the widest
// instructions the machine has; elementwise results do not depend on the width.
#pragma once
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "impl/cpu/loops.h"
#include "impl/kernels/pointwise.h"

namespace parity::impl::cpu {
inline namespace PARITY_KERNEL_ISA {

namespace detail {

// A run where input I is broadcast (stride 0) when bit I of Mask is set, else contiguous like the output.
template <unsigned Mask, typename R, typename F, typename Ptrs, std::size_t... I>
void contiguous_run(R* o, std::int64_t n, const F& f, const Ptrs& p, std::index_sequence<I...>) {
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(p)[((Mask >> I) & 1u) ? 0 : i]...);
}

template <unsigned M, unsigned Count, typename G>
void with_mask(unsigned mask, G& g) {
  if constexpr (M < Count) {
    if (mask == M) return g(std::integral_constant<unsigned, M>{});
    with_mask<M + 1, Count>(mask, g);
  }
}

// out = f(in) over g in square tiles of the output's innermost dim and the dim along which the input is
// contiguous. Returns false (nothing written) when g is not such a permutation.
template <typename R, typename A, typename F>
bool tiled_permute(const Geometry& g, R* out, const A* in, const F& f) {
  if (g.ndim < 2 || g.noperands != 2) return false;
  const int last = g.ndim - 1;
  if (g.strides[0][last] != 1 || g.strides[1][last] == 1 || g.strides[1][last] == 0) return false;
  int j = -1;
  for (int d = 0; d < last; ++d)
    if (g.strides[1][d] == 1) j = d;
  if (j < 0 || g.sizes[last] * g.sizes[j] < 4096) return false;
  // The other dims, walked one element at a time.
  Geometry outer;
  outer.noperands = 2;
  for (int d = 0; d < last; ++d) {
    if (d == j) continue;
    outer.sizes[outer.ndim] = g.sizes[d];
    outer.strides[0][outer.ndim] = g.strides[0][d];
    outer.strides[1][outer.ndim] = g.strides[1][d];
    outer.numel *= g.sizes[d];
    ++outer.ndim;
  }
  // Each tile goes through a buffer in L1: the input's rows are read along memory into it, the output's rows
  // written along memory out of it, so neither side strides across a tile (with a power-of-two stride, a tile's
  // strided rows would all fall into one cache set). ATen's transposing copy does the same (BLOCK_SZ 60).
  constexpr std::int64_t kTile = 60;
  A buffer[kTile * kTile];
  const std::int64_t ni = g.sizes[last], nj = g.sizes[j];
  const std::int64_t out_j = g.strides[0][j], in_i = g.strides[1][last];
  for_each_run(outer, [&](const std::int64_t* off, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t r = 0; r < n; ++r) {
      R* o = out + off[0] + r * s[0];
      const A* x = in + off[1] + r * s[1];
      for (std::int64_t jb = 0; jb < nj; jb += kTile)
        for (std::int64_t ib = 0; ib < ni; ib += kTile) {
          const std::int64_t tj = jb + kTile < nj ? kTile : nj - jb, ti = ib + kTile < ni ? kTile : ni - ib;
          for (std::int64_t ii = 0; ii < ti; ++ii)
            for (std::int64_t jj = 0; jj < tj; ++jj) buffer[jj * kTile + ii] = x[(jb + jj) + (ib + ii) * in_i];
          for (std::int64_t jj = 0; jj < tj; ++jj)
            for (std::int64_t ii = 0; ii < ti; ++ii) o[(jb + jj) * out_j + ib + ii] = f(buffer[jj * kTile + ii]);
        }
    }
  });
  return true;
}

template <typename R, typename F, typename... A, std::size_t... I>
void map(const Geometry& g, void* const* data, const F& f, std::tuple<A...>*, std::index_sequence<I...> seq) {
  R* out = static_cast<R*>(data[0]);
  const std::tuple<const A*...> in{static_cast<const A*>(data[I + 1])...};
  if constexpr (sizeof...(A) == 1)
    if (tiled_permute(g, out, std::get<0>(in), f)) return;
  for_each_run(g, [&](const std::int64_t* off, std::int64_t n, const std::int64_t* s) {
    R* o = out + off[0];
    if (s[0] == 1) {
      bool unit = true;
      unsigned mask = 0;
      ((s[I + 1] == 0 ? (mask |= 1u << I) : (unit = unit && s[I + 1] == 1)), ...);
      if (unit) {
        const std::tuple<const A*...> p{std::get<I>(in) + off[I + 1]...};
        auto run = [&](auto m) { contiguous_run<decltype(m)::value>(o, n, f, p, seq); };
        with_mask<0, (1u << sizeof...(A))>(mask, run);
        return;
      }
    }
    for (std::int64_t i = 0; i < n; ++i) o[i * s[0]] = f(std::get<I>(in)[off[I + 1] + i * s[I + 1]]...);
  });
}

}  // namespace detail

// out = f(inputs...) at every index of g; data[0] is the output's element 0, data[1..] the inputs'.
template <typename F>
void map(const Geometry& g, void* const* data, const F& f) {
  using S = kernels::SignatureOf<F>;
  constexpr std::size_t arity = std::tuple_size_v<typename S::In>;
  detail::map<typename S::Out>(g, data, f, static_cast<typename S::In*>(nullptr), std::make_index_sequence<arity>{});
}

// The executor run_pointwise hands each call's functor to.
struct PointwiseExecutor {
  template <typename F>
  void operator()(const kernels::PointwiseCall& c, const F& f) const {
    map(c.geometry, c.data, f);
  }
};

}  // inline namespace PARITY_KERNEL_ISA
}  // namespace parity::impl::cpu
