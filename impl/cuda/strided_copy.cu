// The strided copy kernel: one thread per element, offsets computed from the logical index.
#include <cuda_runtime.h>

#include "impl/cuda/kernels.h"

namespace parity::impl::cuda::kernels {

namespace {

struct Geometry {
  int ndim;
  std::int64_t sizes[kMaxDims];
  std::int64_t dst_strides[kMaxDims];
  std::int64_t src_strides[kMaxDims];
};

template <typename T>
__global__ void strided_copy_kernel(T* dst, const T* src, Geometry g, std::int64_t numel) {
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= numel) return;
  std::int64_t d = 0, s = 0, rest = i;
  for (int k = g.ndim - 1; k >= 0; --k) {
    std::int64_t idx = rest % g.sizes[k];
    rest /= g.sizes[k];
    d += idx * g.dst_strides[k];
    s += idx * g.src_strides[k];
  }
  dst[d] = src[s];
}

template <typename T>
void launch(void* dst, const void* src, const Geometry& g, std::int64_t numel) {
  constexpr int kThreads = 256;
  auto blocks = static_cast<unsigned>((numel + kThreads - 1) / kThreads);
  strided_copy_kernel<T><<<blocks, kThreads>>>(static_cast<T*>(dst), static_cast<const T*>(src), g, numel);
}

}  // namespace

const char* strided_copy(void* dst, const void* src, std::size_t elem_size, int ndim, const std::int64_t* sizes,
                         const std::int64_t* dst_strides, const std::int64_t* src_strides) {
  if (ndim > kMaxDims) return "strided_copy supports at most 8 dims";
  Geometry g{};
  g.ndim = ndim;
  std::int64_t numel = 1;
  for (int k = 0; k < ndim; ++k) {
    g.sizes[k] = sizes[k];
    g.dst_strides[k] = dst_strides[k];
    g.src_strides[k] = src_strides[k];
    numel *= sizes[k];
  }
  if (numel == 0) return nullptr;
  switch (elem_size) {
    case 1: launch<std::uint8_t>(dst, src, g, numel); break;
    case 4: launch<std::uint32_t>(dst, src, g, numel); break;
    case 8: launch<std::uint64_t>(dst, src, g, numel); break;
    default: return "strided_copy: unsupported element size";
  }
  cudaError_t e = cudaGetLastError();  // a launch that never started
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace parity::impl::cuda::kernels
