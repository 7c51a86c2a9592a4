// The CUDA launcher of impl/kernels/index.h: a gather an element a thread, a scatter on one thread in the walk's
// order, nonzero a chunk a thread. Unrun on a device in this project's CI (no GPU): the element functions are the
// ones host-backed cuda memory runs in the tests.
#include <cuda_runtime.h>

#include "impl/cuda/kernels.h"

namespace parity::impl::cuda::kernels {

namespace {

using impl::kernels::IndexCall;
using impl::kernels::NonzeroCall;

constexpr int kThreads = 256;

unsigned blocks_for(std::int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <typename T>
__global__ void gather_kernel(IndexCall c, unsigned long long* first_bad) {
  const std::int64_t linear = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (linear >= c.geometry.numel) return;
  if (!impl::kernels::gather_element<T>(c, linear)) atomicMin(first_bad, static_cast<unsigned long long>(linear));
}

template <typename T>
__global__ void scatter_kernel(IndexCall c, bool accumulate, std::int64_t* first_bad) {
  *first_bad = impl::kernels::scatter_in_order<T>(c, accumulate);
}

__global__ void nonzero_count_kernel(NonzeroCall c, std::int64_t* counts) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < impl::kernels::nonzero_chunks(c.numel)) counts[b] = impl::kernels::nonzero_chunk_count(c, b);
}

__global__ void nonzero_write_kernel(NonzeroCall c, const std::int64_t* firsts) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < impl::kernels::nonzero_chunks(c.numel)) impl::kernels::nonzero_chunk_write(c, b, firsts[b]);
}

}  // namespace

const char* gather(const IndexCall& call, std::int64_t* first_bad) {
  if (call.geometry.numel == 0) return nullptr;
  auto* word = reinterpret_cast<unsigned long long*>(first_bad);
  impl::dispatch(call.dtype, [&](auto tag) {
    gather_kernel<decltype(tag)><<<blocks_for(call.geometry.numel), kThreads>>>(call, word);
  });
  return launched();
}

const char* scatter(const IndexCall& call, bool accumulate, std::int64_t* first_bad) {
  impl::dispatch(call.dtype, [&](auto tag) { scatter_kernel<decltype(tag)><<<1, 1>>>(call, accumulate, first_bad); });
  return launched();
}

const char* nonzero_count(const NonzeroCall& call, std::int64_t* counts) {
  const std::int64_t chunks = impl::kernels::nonzero_chunks(call.numel);
  if (chunks > 0) nonzero_count_kernel<<<blocks_for(chunks), kThreads>>>(call, counts);
  return launched();
}

const char* nonzero_write(const NonzeroCall& call, const std::int64_t* firsts) {
  const std::int64_t chunks = impl::kernels::nonzero_chunks(call.numel);
  if (chunks > 0) nonzero_write_kernel<<<blocks_for(chunks), kThreads>>>(call, firsts);
  return launched();
}

}  // namespace parity::impl::cuda::kernels
