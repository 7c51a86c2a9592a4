// impl/cpu/gemm.h's products, compiled once per instruction set: CMake builds this file with
// -DPARITY_CPU_CAPABILITY=baseline, =avx2 (-mavx2 -mfma) and =avx512 (-mavx512f -mfma), each with -O3 and
// -ffp-contract=off, so that a multiply and an add are fused only where a tile asks for it.
//
// The blocking is the usual one for a single core (Goto's, as BLIS and OpenBLAS do it): a kDepth-deep slice of b
// is packed into panels of kTileCols columns, a kBlockRows-tall block of a into panels of kTileRows rows, and a
// tile of kTileRows x kTileCols sums lives in registers for the whole slice, its b panel in L1 and the block of
// a in L2.
#include "impl/cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#ifndef PARITY_CPU_CAPABILITY
#error "impl/cpu/gemm.cpp is built by CMake once per capability, with PARITY_CPU_CAPABILITY set"
#endif

namespace parity::impl::cpu::PARITY_CPU_CAPABILITY {

namespace {

using kernels::MatmulGeometry;

// The build's widest vector of T and the four things a tile does with one: load, store, broadcast, and add a
// product, fused (one rounding) or not (two).
template <typename T>
struct Vec;
#if defined(__AVX512F__)
// 24 sums of the 32 registers, two for b's panel row and one for a broadcast element of a.
constexpr int kTileRows = 12;
template <>
struct Vec<float> {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(float x) { return _mm512_set1_ps(x); }
  static V fused(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
  static V rounded(V a, V b, V acc) { return _mm512_add_ps(acc, _mm512_mul_ps(a, b)); }
};
template <>
struct Vec<double> {
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V broadcast(double x) { return _mm512_set1_pd(x); }
  static V fused(V a, V b, V acc) { return _mm512_fmadd_pd(a, b, acc); }
  static V rounded(V a, V b, V acc) { return _mm512_add_pd(acc, _mm512_mul_pd(a, b)); }
};
#elif defined(__AVX2__)
// 12 sums of the 16 registers.
constexpr int kTileRows = 6;
template <>
struct Vec<float> {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V broadcast(float x) { return _mm256_set1_ps(x); }
  static V fused(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
  static V rounded(V a, V b, V acc) { return _mm256_add_ps(acc, _mm256_mul_ps(a, b)); }
};
template <>
struct Vec<double> {
  using V = __m256d;
  static constexpr int kLanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V broadcast(double x) { return _mm256_set1_pd(x); }
  static V fused(V a, V b, V acc) { return _mm256_fmadd_pd(a, b, acc); }
  static V rounded(V a, V b, V acc) { return _mm256_add_pd(acc, _mm256_mul_pd(a, b)); }
};
#else
// x86-64's baseline: scalars, std::fma in software where the CPU has no instruction for it.
constexpr int kTileRows = 4;
template <typename T>
struct Vec {
  using V = T;
  static constexpr int kLanes = 1;
  static V zero() { return T(0); }
  static V load(const T* p) { return *p; }
  static void store(T* p, V v) { *p = v; }
  static V broadcast(T x) { return x; }
  static V fused(V a, V b, V acc) { return std::fma(a, b, acc); }
  static V rounded(V a, V b, V acc) { return acc + a * b; }
};
#endif

constexpr int kTileVectors = Vec<float>::kLanes == 1 ? 4 : 2;
// k values per packed slice: a tile's b panel (kTileCols x kDepth) fits L1.
constexpr std::int64_t kDepth = 256;
// Rows of a per packed block: kTileRows x 8 rows of kDepth fit L2 beside the slice of b.
constexpr std::int64_t kBlockRows = kTileRows * 8;

template <typename T, bool Fused>
struct Blocked {
  using W = Vec<T>;
  static constexpr int kRows = kTileRows;
  static constexpr int kCols = kTileVectors * W::kLanes;

  // The tile's sums at c (row stride ldc, columns adjacent) over depth values of k, from a's panel (kRows
  // values a k) and b's (kCols a k); started from zero, or from what c holds when resume.
  static void tile(std::int64_t depth, const T* ap, const T* bp, T* c, std::int64_t ldc, bool resume) {
    typename W::V acc[kRows][kTileVectors];
    for (int i = 0; i < kRows; ++i)
      for (int v = 0; v < kTileVectors; ++v) acc[i][v] = resume ? W::load(c + i * ldc + v * W::kLanes) : W::zero();
    for (std::int64_t k = 0; k < depth; ++k) {
      typename W::V row[kTileVectors];
      for (int v = 0; v < kTileVectors; ++v) row[v] = W::load(bp + k * kCols + v * W::kLanes);
      for (int i = 0; i < kRows; ++i) {
        const auto x = W::broadcast(ap[k * kRows + i]);
        for (int v = 0; v < kTileVectors; ++v)
          acc[i][v] = Fused ? W::fused(x, row[v], acc[i][v]) : W::rounded(x, row[v], acc[i][v]);
      }
    }
    for (int i = 0; i < kRows; ++i)
      for (int v = 0; v < kTileVectors; ++v) W::store(c + i * ldc + v * W::kLanes, acc[i][v]);
  }

  // Panel p of b's slice k0 .. k0+depth: kCols columns a k (zero past the last column).
  static void pack_b(const MatmulGeometry& g, const T* b, std::int64_t k0, std::int64_t depth, std::int64_t p, T* bp) {
    const std::int64_t col0 = p * kCols;
    const int cols = static_cast<int>(std::min<std::int64_t>(kCols, g.cols - col0));
    T* dst = bp + p * depth * kCols;
    for (std::int64_t k = 0; k < depth; ++k, dst += kCols) {
      const T* src = b + (k0 + k) * g.b[1] + col0 * g.b[2];
      if (g.b[2] == 1) std::copy(src, src + cols, dst);
      else
        for (int j = 0; j < cols; ++j) dst[j] = src[j * g.b[2]];
      std::fill(dst + cols, dst + kCols, T(0));
    }
  }

  // Panel p of a's block of rows r0 .. r0+block_rows over the slice k0 .. k0+depth: kRows rows a k (zero past the
  // block's last row). Each row is read along k, as a row-major a lies.
  static void pack_a(const MatmulGeometry& g, const T* a, std::int64_t r0, std::int64_t block_rows, std::int64_t k0,
                     std::int64_t depth, std::int64_t p, T* ap) {
    T* dst = ap + p * depth * kRows;
    for (int i = 0; i < kRows; ++i) {
      const std::int64_t row = p * kRows + i;
      if (row >= block_rows) {
        for (std::int64_t k = 0; k < depth; ++k) dst[k * kRows + i] = T(0);
        continue;
      }
      const T* src = a + (r0 + row) * g.a[1] + k0 * g.a[2];
      for (std::int64_t k = 0; k < depth; ++k) dst[k * kRows + i] = src[k * g.a[2]];
    }
  }

  static void run(const MatmulGeometry& g, T* out, const T* a, const T* b) {
    const std::int64_t col_panels = (g.cols + kCols - 1) / kCols;
    const std::int64_t depth_max = std::min(kDepth, g.inner);
    const auto bp = std::make_unique<T[]>(static_cast<std::size_t>(col_panels * kCols * depth_max));
    const auto ap = std::make_unique<T[]>(static_cast<std::size_t>(kBlockRows * depth_max));
    // Where a tile's sums live between slices when out cannot hold them as a tile does (an edge, or columns
    // that are not adjacent).
    T scratch[kRows * kCols];
    for (std::int64_t n = 0; n < g.batches; ++n) {
      const T* xa = a + n * g.a[0];
      const T* yb = b + n * g.b[0];
      T* o = out + n * g.o[0];
      for (std::int64_t k0 = 0; k0 < g.inner; k0 += kDepth) {
        const std::int64_t depth = std::min(kDepth, g.inner - k0);
        const bool resume = k0 > 0;
        for (std::int64_t p = 0; p < col_panels; ++p) pack_b(g, yb, k0, depth, p, bp.get());
        for (std::int64_t r0 = 0; r0 < g.rows; r0 += kBlockRows) {
          const std::int64_t block_rows = std::min(kBlockRows, g.rows - r0);
          const std::int64_t row_panels = (block_rows + kRows - 1) / kRows;
          for (std::int64_t p = 0; p < row_panels; ++p) pack_a(g, xa, r0, block_rows, k0, depth, p, ap.get());
          for (std::int64_t q = 0; q < col_panels; ++q)
            for (std::int64_t p = 0; p < row_panels; ++p) {
              const std::int64_t row = r0 + p * kRows, col = q * kCols;
              const int rows = static_cast<int>(std::min<std::int64_t>(kRows, g.rows - row));
              const int cols = static_cast<int>(std::min<std::int64_t>(kCols, g.cols - col));
              const T* apanel = ap.get() + p * depth * kRows;
              const T* bpanel = bp.get() + q * depth * kCols;
              T* c = o + row * g.o[1] + col * g.o[2];
              if (rows == kRows && cols == kCols && g.o[2] == 1) {
                tile(depth, apanel, bpanel, c, g.o[1], resume);
                continue;
              }
              if (resume)
                for (int i = 0; i < rows; ++i)
                  for (int j = 0; j < cols; ++j) scratch[i * kCols + j] = c[i * g.o[1] + j * g.o[2]];
              tile(depth, apanel, bpanel, scratch, kCols, resume);
              for (int i = 0; i < rows; ++i)
                for (int j = 0; j < cols; ++j) c[i * g.o[1] + j * g.o[2]] = scratch[i * kCols + j];
            }
        }
      }
    }
  }
};

template <typename T>
void run(const MatmulGeometry& g, T* out, const T* a, const T* b, bool fused) {
  if (fused) Blocked<T, true>::run(g, out, a, b);
  else Blocked<T, false>::run(g, out, a, b);
}

}  // namespace

void gemm(const MatmulGeometry& g, float* out, const float* a, const float* b, bool fused) { run(g, out, a, b, fused); }
void gemm(const MatmulGeometry& g, double* out, const double* a, const double* b, bool fused) {
  run(g, out, a, b, fused);
}

}  // namespace parity::impl::cpu::PARITY_CPU_CAPABILITY
