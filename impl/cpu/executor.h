// The CPU executor of impl/kernels: applies a pointwise functor at every index of a call's geometry, on this
// thread. The functor's operator() says the operands' element types (the output's is its return type, each
// input's its parameter's). Fast paths, all computing each element exactly as the generic loop would:
//   - a run whose operands are all contiguous or broadcast (stride 1 or 0, the output's 1) is a plain loop with
//     the broadcast operands fixed at compile time, which the compiler vectorises;
//   - a one-input map whose input walks memory along another dim than the output (a transpose, a memory-format
//     conversion) copies in square tiles, so that both sides stay in cache; with AVX2, 4- and 8-byte elements
//     cross a tile in register-transposed blocks.
// Compiled once per CPU capability (impl/cpu/capability.h) so that the vectorised loops use the widest
// instructions the machine has; elementwise results do not depend on the width.
#pragma once
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

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

// A square block of kBlock elements a side moved from rows of `src` (row stride ss, in elements) into rows of
// `dst` (row stride ds), transposed in registers: dst[m * ds + k] = src[k * ss + m]. Only bytes move (loads,
// shuffles and stores, no arithmetic), so one mover serves every element type of its size. kBlock 0: none.
template <std::size_t Size>
struct RegisterTranspose {
  static constexpr int kBlock = 0;
};
#if defined(__AVX2__)
template <>
struct RegisterTranspose<4> {
  static constexpr int kBlock = 8;
  static void move(const void* from, std::int64_t ss, void* to, std::int64_t ds) {
    const float* src = static_cast<const float*>(from);
    float* dst = static_cast<float*>(to);
    __m256 r[8], t[8], u[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + k * ss);
    for (int k = 0; k < 8; k += 2) {
      t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
      t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
      u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
      u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
      u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
      u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
    }
    for (int m = 0; m < 4; ++m) {
      _mm256_storeu_ps(dst + m * ds, _mm256_permute2f128_ps(u[m], u[m + 4], 0x20));
      _mm256_storeu_ps(dst + (m + 4) * ds, _mm256_permute2f128_ps(u[m], u[m + 4], 0x31));
    }
  }
};
template <>
struct RegisterTranspose<8> {
  static constexpr int kBlock = 4;
  static void move(const void* from, std::int64_t ss, void* to, std::int64_t ds) {
    const double* src = static_cast<const double*>(from);
    double* dst = static_cast<double*>(to);
    __m256d r[4], t[4];
    for (int k = 0; k < 4; ++k) r[k] = _mm256_loadu_pd(src + k * ss);
    t[0] = _mm256_unpacklo_pd(r[0], r[1]);
    t[1] = _mm256_unpackhi_pd(r[0], r[1]);
    t[2] = _mm256_unpacklo_pd(r[2], r[3]);
    t[3] = _mm256_unpackhi_pd(r[2], r[3]);
    _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t[0], t[2], 0x20));
    _mm256_storeu_pd(dst + ds, _mm256_permute2f128_pd(t[1], t[3], 0x20));
    _mm256_storeu_pd(dst + 2 * ds, _mm256_permute2f128_pd(t[0], t[2], 0x31));
    _mm256_storeu_pd(dst + 3 * ds, _mm256_permute2f128_pd(t[1], t[3], 0x31));
  }
};
#endif

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
  // strided rows would all fall into one cache set). ATen's transposing copy does the same (BLOCK_SZ 60). Where
  // registers transpose A, a whole tile fills block by block, and 16 a side was fastest (a 2048x2048 float
  // transpose: 12.7 GB/s element by element in tiles of 60, 22 GB/s in register blocks in tiles of 16).
  using Mover = RegisterTranspose<sizeof(A)>;
  constexpr std::int64_t kTile = Mover::kBlock > 0 ? 16 : 60;
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
          bool filled = false;
          if constexpr (Mover::kBlock > 0) {
            if (tj == kTile && ti == kTile) {
              for (std::int64_t jj = 0; jj < kTile; jj += Mover::kBlock)
                for (std::int64_t ii = 0; ii < kTile; ii += Mover::kBlock)
                  Mover::move(x + (jb + jj) + (ib + ii) * in_i, in_i, buffer + jj * kTile + ii, kTile);
              filled = true;
            }
          }
          if (!filled)
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
