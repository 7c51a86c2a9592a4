// The CUDA launcher of impl/kernels/matmul.h: one thread an output element, a 1 x 1 tile over the operands in
// place, summed by the same policy and in the same k order as the CPU executor's tiles.
#include <cuda_runtime.h>

#include "impl/cuda/kernels.h"
#include "impl/cuda/matmul.h"
#include "impl/kernels/matmul.h"

namespace parity::impl::cuda::kernels {

namespace {

using impl::kernels::MatmulGeometry;

template <class Sum, typename T>
__global__ void matmul_kernel(T* out, const T* a, const T* b, MatmulGeometry g, std::int64_t numel) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= numel) return;
  const std::int64_t j = e % g.cols, i = (e / g.cols) % g.rows, n = e / (g.cols * g.rows);
  typename Sum::Acc acc[1][1];
  const impl::kernels::TileOperands<T> operands{a + n * g.a[0] + i * g.a[1], 0, g.a[2], b + n * g.b[0] + j * g.b[2],
                                                g.b[1]};
  impl::kernels::sum_tile<Sum, 1, 1, T>(g.inner, operands, acc);
  out[n * g.o[0] + i * g.o[1] + j * g.o[2]] = Sum::finish(acc[0][0]);
}

template <class Sum, typename T>
void launch(void* out, const void* a, const void* b, const MatmulGeometry& g, std::int64_t numel) {
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((numel + kThreads - 1) / kThreads);
  matmul_kernel<Sum, T><<<blocks, kThreads>>>(static_cast<T*>(out), static_cast<const T*>(a),
                                              static_cast<const T*>(b), g, numel);
}

}  // namespace

const char* matmul(MatmulElement type, impl::kernels::MatmulRounding rounding, void* out, const void* a, const void* b,
                   const impl::kernels::MatmulGeometry& g) {
  const std::int64_t numel = g.batches * g.rows * g.cols;
  if (numel == 0) return nullptr;
  if (numel / 256 >= (std::int64_t{1} << 31)) return "matmul: too many output elements for one launch";
  using impl::kernels::SumAny;
  using impl::kernels::SumFused;
  using impl::kernels::SumInFloat;
  using impl::kernels::SumInType;
  using impl::kernels::SumRoundingEachStep;
  using impl::kernels::SumWrapping;
  switch (type) {
    case MatmulElement::Bool: launch<SumAny, bool>(out, a, b, g, numel); break;
    case MatmulElement::Int32: launch<SumWrapping<std::int32_t>, std::int32_t>(out, a, b, g, numel); break;
    case MatmulElement::Int64: launch<SumWrapping<std::int64_t>, std::int64_t>(out, a, b, g, numel); break;
    case MatmulElement::Float16:
      if (rounding.sum_16bit_in_float) launch<SumInFloat<impl::Half>, impl::Half>(out, a, b, g, numel);
      else launch<SumRoundingEachStep<impl::Half>, impl::Half>(out, a, b, g, numel);
      break;
    case MatmulElement::BFloat16:
      if (rounding.sum_16bit_in_float) launch<SumInFloat<impl::BFloat16>, impl::BFloat16>(out, a, b, g, numel);
      else launch<SumRoundingEachStep<impl::BFloat16>, impl::BFloat16>(out, a, b, g, numel);
      break;
    case MatmulElement::Float32:
      if (rounding.fused) launch<SumFused<float>, float>(out, a, b, g, numel);
      else launch<SumInType<float>, float>(out, a, b, g, numel);
      break;
    case MatmulElement::Float64:
      if (rounding.fused) launch<SumFused<double>, double>(out, a, b, g, numel);
      else launch<SumInType<double>, double>(out, a, b, g, numel);
      break;
  }
  return launched();
}

}  // namespace parity::impl::cuda::kernels
