#include "impl/cpu/matmul.h"

#include <algorithm>
#include <memory>
#include <type_traits>

#include "impl/cpu/gemm.h"
#include "impl/kernels/matmul.h"

namespace parity::impl::cpu {

namespace {

using kernels::MatmulGeometry;

// A register tile: MR rows of a times NR columns of b, NR accumulators a row filling about two SSE registers
// (x86-64's baseline vectors: 16 bytes).
constexpr int kRows = 4;
template <class Sum>
constexpr int tile_cols() {
  return std::clamp(static_cast<int>(32 / sizeof(typename Sum::Acc)), 4, 16);
}

template <class Sum, typename T>
void run(const MatmulGeometry& g, T* out, const T* x, const T* y) {
  constexpr int MR = kRows, NR = tile_cols<Sum>();
  const std::int64_t K = g.inner;
  const std::int64_t row_tiles = (g.rows + MR - 1) / MR;
  // a packed as row tiles of MR rows (k-major within a tile), b as one column panel of NR columns at a time; the
  // rows and columns past the edge are zero and never stored.
  const auto ap = std::make_unique<T[]>(static_cast<std::size_t>(row_tiles * MR * K));  // not vector<bool>
  const auto bp = std::make_unique<T[]>(static_cast<std::size_t>(NR * K));
  for (std::int64_t n = 0; n < g.batches; ++n) {
    const T* xa = x + n * g.a[0];
    const T* yb = y + n * g.b[0];
    T* o = out + n * g.o[0];
    for (std::int64_t t = 0; t < row_tiles; ++t)
      for (std::int64_t k = 0; k < K; ++k)
        for (int i = 0; i < MR; ++i) {
          const std::int64_t r = t * MR + i;
          ap[static_cast<std::size_t>((t * K + k) * MR + i)] = r < g.rows ? xa[r * g.a[1] + k * g.a[2]] : T(0);
        }
    for (std::int64_t j0 = 0; j0 < g.cols; j0 += NR) {
      const int nc = static_cast<int>(std::min<std::int64_t>(NR, g.cols - j0));
      for (std::int64_t k = 0; k < K; ++k)
        for (int j = 0; j < NR; ++j)
          bp[static_cast<std::size_t>(k * NR + j)] = j < nc ? yb[k * g.b[1] + (j0 + j) * g.b[2]] : T(0);
      for (std::int64_t t = 0; t < row_tiles; ++t) {
        typename Sum::Acc acc[MR][NR];
        kernels::sum_tile<Sum, MR, NR, T>(K, {ap.get() + t * K * MR, 1, MR, bp.get(), NR}, acc);
        const int nr = static_cast<int>(std::min<std::int64_t>(MR, g.rows - t * MR));
        for (int i = 0; i < nr; ++i)
          for (int j = 0; j < nc; ++j) o[(t * MR + i) * g.o[1] + (j0 + j) * g.o[2]] = Sum::finish(acc[i][j]);
      }
    }
  }
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, kernels::MatmulRounding rounding) {
  const MatmulGeometry g = kernels::matmul_geometry(out, a, b);
  if (g.batches == 0 || g.rows == 0 || g.cols == 0) return;
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      run<kernels::SumAny>(g, o, x, y);
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      if (rounding.sum_16bit_in_float) run<kernels::SumInFloat<T>>(g, o, x, y);
      else run<kernels::SumRoundingEachStep<T>>(g, o, x, y);
    } else if constexpr (std::is_integral_v<T>) {
      run<kernels::SumWrapping<T>>(g, o, x, y);
    } else {
      if (g.inner == 0) run<kernels::SumInType<T>>(g, o, x, y);  // zeros: the blocked products need a k
      else gemm(g, o, x, y, rounding.fused);
    }
  });
}

}  // namespace parity::impl::cpu
