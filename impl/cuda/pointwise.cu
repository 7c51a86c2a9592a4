// The CUDA launcher of impl/kernels: the functors run_pointwise picks (the very code the CPU executor runs),
// applied by one thread per element, which finds its operands' offsets from its linear index; a sum launches one
// thread per output, which adds its elements in order (kernels::sum_output). Unrun on a device in this
// project's CI (no GPU): the functors and the index arithmetic are the ones the CPU tests run.
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "impl/cuda/kernels.h"

namespace parity::impl::cuda::kernels {

namespace {

using impl::kernels::Geometry;
using impl::kernels::kMaxOperands;

struct Pointers {
  void* data[kMaxOperands];
};

template <typename F, typename R, typename... A, std::size_t... I>
__device__ void apply(const F& f, const Geometry& g, const Pointers& p, std::int64_t linear,
                      std::index_sequence<I...>) {
  std::int64_t off[kMaxOperands];
  impl::kernels::offsets(g, linear, off);
  static_cast<R*>(p.data[0])[off[0]] = f(static_cast<const A*>(p.data[I + 1])[off[I + 1]]...);
}

template <typename F, typename R, typename In>
struct Apply;
template <typename F, typename R, typename... A>
struct Apply<F, R, std::tuple<A...>> {
  __device__ static void at(const F& f, const Geometry& g, const Pointers& p, std::int64_t linear) {
    apply<F, R, A...>(f, g, p, linear, std::index_sequence_for<A...>{});
  }
};

template <typename F>
__global__ void pointwise_kernel(F f, Geometry g, Pointers p) {
  using S = impl::kernels::SignatureOf<F>;
  const std::int64_t linear = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (linear >= g.numel) return;
  Apply<F, typename S::Out, typename S::In>::at(f, g, p, linear);
}

constexpr int kThreads = 256;

struct Launcher {
  template <typename F>
  void operator()(const impl::kernels::PointwiseCall& c, const F& f) const {
    if (c.geometry.numel == 0) return;
    Pointers p;
    for (int k = 0; k < kMaxOperands; ++k) p.data[k] = c.data[k];
    const auto blocks = static_cast<unsigned>((c.geometry.numel + kThreads - 1) / kThreads);
    pointwise_kernel<F><<<blocks, kThreads>>>(f, c.geometry, p);
  }
};

template <typename T>
__global__ void sum_kernel(Geometry outer, Geometry inner, void* out, const void* in) {
  const std::int64_t linear = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (linear < outer.numel) impl::kernels::sum_output<T>(outer, inner, out, in, linear);
}

}  // namespace

const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

const char* run_pointwise(const impl::kernels::PointwiseCall& call) {
  Launcher launcher;
  impl::kernels::run_pointwise(launcher, call);
  return launched();
}

const char* run_sum(const impl::kernels::SumCall& call) {
  if (call.outer.numel == 0) return nullptr;
  const auto blocks = static_cast<unsigned>((call.outer.numel + kThreads - 1) / kThreads);
  impl::dispatch(call.dtype, [&](auto tag) {
    sum_kernel<decltype(tag)><<<blocks, kThreads>>>(call.outer, call.inner, call.out, call.in);
  });
  return launched();
}

}  // namespace parity::impl::cuda::kernels
