// The CUDA launcher of impl/kernels/matmul.h: output tiles staged through shared memory, each element summed by the
// same policy and in the same k order as the CPU executor's tiles. Unrun on a device in this project's CI (no GPU).
#include <cuda_runtime.h>

#include "impl/cuda/kernels.h"
#include "impl/cuda/matmul.h"
#include "impl/kernels/matmul.h"

namespace parity::impl::cuda::kernels {

namespace {

using impl::kernels::MatmulGeometry;

// A block computes a kTile x kTile tile of one output matrix, staging kDepth-deep slices of a and b in shared
// memory; each of its threads owns kPer x kPer elements, interleaved (row r + i * kSpan, column c + j * kSpan) so
// that a warp reads adjacent shared-memory words. Every element still sums its products alone with Sum::step, k
// ascending, and takes exactly `inner` steps (the padding of a ragged slice is never added): the CPU's bits.
constexpr int kTile = 128, kDepth = 8, kPer = 8, kSpan = kTile / kPer, kThreads = kSpan * kSpan;

template <class Sum, typename T>
__global__ void __launch_bounds__(kThreads) matmul_kernel(T* out, const T* a, const T* b, MatmulGeometry g) {
  __shared__ T as[kDepth][kTile];
  __shared__ T bs[kDepth][kTile];
  const int tid = threadIdx.x, r = tid / kSpan, c = tid % kSpan;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  for (std::int64_t n = blockIdx.z; n < g.batches; n += gridDim.z) {
    const T* an = a + n * g.a[0];
    const T* bn = b + n * g.b[0];
    typename Sum::Acc acc[kPer][kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i)
#pragma unroll
      for (int j = 0; j < kPer; ++j) acc[i][j] = Sum::zero();
    for (std::int64_t k0 = 0; k0 < g.inner; k0 += kDepth) {
      // Adjacent threads load adjacent k of a (a row-major a's adjacent elements) and adjacent columns of b.
      for (int e = tid; e < kTile * kDepth; e += kThreads) {
        const int kk = e % kDepth, i = e / kDepth;
        const std::int64_t gi = row0 + i, gk = k0 + kk;
        as[kk][i] = gi < g.rows && gk < g.inner ? an[gi * g.a[1] + gk * g.a[2]] : T(0);
      }
      for (int e = tid; e < kTile * kDepth; e += kThreads) {
        const int j = e % kTile, kk = e / kTile;
        const std::int64_t gj = col0 + j, gk = k0 + kk;
        bs[kk][j] = gj < g.cols && gk < g.inner ? bn[gk * g.b[1] + gj * g.b[2]] : T(0);
      }
      __syncthreads();
      const int depth = g.inner - k0 < kDepth ? static_cast<int>(g.inner - k0) : kDepth;
      for (int kk = 0; kk < depth; ++kk) {
        T ar[kPer], br[kPer];
#pragma unroll
        for (int i = 0; i < kPer; ++i) ar[i] = as[kk][r + i * kSpan];
#pragma unroll
        for (int j = 0; j < kPer; ++j) br[j] = bs[kk][c + j * kSpan];
#pragma unroll
        for (int i = 0; i < kPer; ++i)
#pragma unroll
          for (int j = 0; j < kPer; ++j) acc[i][j] = Sum::step(acc[i][j], ar[i], br[j]);
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const std::int64_t gi = row0 + r + i * kSpan;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const std::int64_t gj = col0 + c + j * kSpan;
        if (gi < g.rows && gj < g.cols) out[n * g.o[0] + gi * g.o[1] + gj * g.o[2]] = Sum::finish(acc[i][j]);
      }
    }
  }
}

template <class Sum, typename T>
void launch(void* out, const void* a, const void* b, const MatmulGeometry& g) {
  const dim3 grid(static_cast<unsigned>((g.cols + kTile - 1) / kTile),
                  static_cast<unsigned>((g.rows + kTile - 1) / kTile),
                  static_cast<unsigned>(g.batches < 65535 ? g.batches : 65535));
  matmul_kernel<Sum, T><<<grid, kThreads>>>(static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b),
                                            g);
}

}  // namespace

const char* matmul(MatmulElement type, impl::kernels::MatmulRounding rounding, void* out, const void* a, const void* b,
                   const impl::kernels::MatmulGeometry& g) {
  if (g.batches * g.rows * g.cols == 0) return nullptr;
  // The grid's y extent is at most 65535 tiles; its x extent 2^31 - 1 (batches loop over z).
  if ((g.rows + kTile - 1) / kTile > 65535) return "matmul: too many rows for one launch";
  using impl::kernels::SumAny;
  using impl::kernels::SumFused;
  using impl::kernels::SumInFloat;
  using impl::kernels::SumInType;
  using impl::kernels::SumRoundingEachStep;
  using impl::kernels::SumWrapping;
  switch (type) {
    case MatmulElement::Bool: launch<SumAny, bool>(out, a, b, g); break;
    case MatmulElement::Int32: launch<SumWrapping<std::int32_t>, std::int32_t>(out, a, b, g); break;
    case MatmulElement::Int64: launch<SumWrapping<std::int64_t>, std::int64_t>(out, a, b, g); break;
    case MatmulElement::Float16:
      if (rounding.sum_16bit_in_float) launch<SumInFloat<impl::Half>, impl::Half>(out, a, b, g);
      else launch<SumRoundingEachStep<impl::Half>, impl::Half>(out, a, b, g);
      break;
    case MatmulElement::BFloat16:
      if (rounding.sum_16bit_in_float) launch<SumInFloat<impl::BFloat16>, impl::BFloat16>(out, a, b, g);
      else launch<SumRoundingEachStep<impl::BFloat16>, impl::BFloat16>(out, a, b, g);
      break;
    case MatmulElement::Float32:
      if (rounding.fused) launch<SumFused<float>, float>(out, a, b, g);
      else launch<SumInType<float>, float>(out, a, b, g);
      break;
    case MatmulElement::Float64:
      if (rounding.fused) launch<SumFused<double>, double>(out, a, b, g);
      else launch<SumInType<double>, double>(out, a, b, g);
      break;
  }
  return launched();
}

}  // namespace parity::impl::cuda::kernels
