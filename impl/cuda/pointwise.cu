// The CUDA launcher of impl/kernels: the functors run_pointwise picks (the very code the CPU executor runs),
// applied at every element: over one run (a contiguous or broadcast geometry) by a thread per few elements with no
// index division, and a same-type dense copy by the copy engine; over any other geometry by a thread per element,
// which finds its operands' offsets from its linear index. A sum runs the
// device order of impl/kernels/reduce.h (DeviceSumPlan): a thread per short output, else blocks of lanes whose
// partial sums combine as trees in shared memory. Unrun on a device in this
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
__device__ void apply(const F& f, const Pointers& p, const std::int64_t* off, std::index_sequence<I...>) {
  static_cast<R*>(p.data[0])[off[0]] = f(static_cast<const A*>(p.data[I + 1])[off[I + 1]]...);
}

template <typename F, typename R, typename In>
struct Apply;
template <typename F, typename R, typename... A>
struct Apply<F, R, std::tuple<A...>> {
  __device__ static void at(const F& f, const Pointers& p, const std::int64_t* off) {
    apply<F, R, A...>(f, p, off, std::index_sequence_for<A...>{});
  }
};

template <typename F>
__device__ void apply_at(const F& f, const Pointers& p, const std::int64_t* off) {
  using S = impl::kernels::SignatureOf<F>;
  Apply<F, typename S::Out, typename S::In>::at(f, p, off);
}

// impl::kernels::offsets in 32-bit arithmetic, which a GPU divides several times faster than 64-bit: for a
// geometry of fewer than 2^32 elements (each size is smaller then too).
__device__ void offsets32(const Geometry& g, std::uint32_t linear, std::int64_t* off) {
  for (int k = 0; k < g.noperands; ++k) off[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const auto size = static_cast<std::uint32_t>(g.sizes[d]);
    const std::uint32_t i = linear % size;
    linear /= size;
    for (int k = 0; k < g.noperands; ++k) off[k] += static_cast<std::int64_t>(i) * g.strides[k][d];
  }
}

// Any geometry: each thread finds its element's offsets from its linear index.
template <typename F>
__global__ void pointwise_kernel(F f, Geometry g, Pointers p) {
  const std::int64_t linear = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (linear >= g.numel) return;
  std::int64_t off[kMaxOperands];
  if (g.numel <= 0xffffffffLL) offsets32(g, static_cast<std::uint32_t>(linear), off);
  else impl::kernels::offsets(g, linear, off);
  apply_at(f, p, off);
}

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // elements a thread, a block apart, as ATen's elementwise kernels take them

// One run (a geometry of at most one dim, as coalescing leaves a contiguous or broadcast operand): operand k's
// element i is at i * stride[k], with no division.
struct RunStrides {
  std::int64_t s[kMaxOperands];
};

template <typename F>
__global__ void pointwise_run_kernel(F f, std::int64_t numel, RunStrides st, Pointers p) {
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t i = base + static_cast<std::int64_t>(u) * kThreads;
    if (i >= numel) return;
    std::int64_t off[kMaxOperands];
    for (int k = 0; k < kMaxOperands; ++k) off[k] = i * st.s[k];
    apply_at(f, p, off);
  }
}

// A copy whose bytes are the element's: not bool's, whose copy turns any nonzero byte into 1.
template <typename F>
struct IsSameTypeCopy : std::false_type {};
template <typename T>
struct IsSameTypeCopy<impl::kernels::CopyFn<T, T>> : std::bool_constant<!std::is_same_v<T, bool>> {
  using Element = T;
};

struct Launcher {
  mutable cudaError_t copy_error = cudaSuccess;  // of a copy that went to the copy engine
  template <typename F>
  void operator()(const impl::kernels::PointwiseCall& c, const F& f) const {
    const Geometry& g = c.geometry;
    if (g.numel == 0) return;
    Pointers p;
    for (int k = 0; k < kMaxOperands; ++k) p.data[k] = c.data[k];
    if (g.ndim > 1) {
      const auto blocks = static_cast<unsigned>((g.numel + kThreads - 1) / kThreads);
      pointwise_kernel<F><<<blocks, kThreads>>>(f, g, p);
      return;
    }
    RunStrides st{};
    bool dense = true;
    for (int k = 0; k < g.noperands; ++k) {
      st.s[k] = g.ndim == 0 ? 0 : g.strides[k][0];
      dense = dense && (g.ndim == 0 || st.s[k] == 1);
    }
    if constexpr (IsSameTypeCopy<F>::value) {
      // A copy that changes nothing about the bytes: the copy engine's device-to-device bandwidth.
      if (dense) {
        const std::size_t bytes = static_cast<std::size_t>(g.numel) * sizeof(typename IsSameTypeCopy<F>::Element);
        copy_error = cudaMemcpyAsync(p.data[0], p.data[1], bytes, cudaMemcpyDeviceToDevice);
        return;
      }
    }
    const auto blocks = static_cast<unsigned>((g.numel + kThreads * kUnroll - 1) / (kThreads * kUnroll));
    pointwise_run_kernel<F><<<blocks, kThreads>>>(f, g.numel, st, p);
  }
};

template <typename T>
__global__ void sum_kernel(Geometry outer, Geometry inner, void* out, const void* in) {
  const std::int64_t linear = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (linear < outer.numel) impl::kernels::sum_output<T>(outer, inner, out, in, linear);
}

// Block b of output o (blockIdx.x = o * blocks + b): its lanes' partial sums, combined as a tree in shared
// memory; the output itself when it has one block, else partials[blockIdx.x].
template <typename T>
__global__ void sum_lanes_kernel(Geometry outer, Geometry inner, void* out, const void* in, std::int64_t blocks,
                                 void* partials) {
  using Op = impl::kernels::SumOp<T>;
  using Acc = typename Op::acc_t;
  constexpr int kLanes = impl::kernels::kDeviceSumBlockLanes;
  __shared__ Acc p[kLanes];
  const std::int64_t o = blockIdx.x / blocks, b = blockIdx.x % blocks;
  std::int64_t off[kMaxOperands];
  impl::kernels::offsets(outer, o, off);
  p[threadIdx.x] = impl::kernels::sum_lane(inner, static_cast<const T*>(in) + off[1], b * kLanes + threadIdx.x,
                                           blocks * kLanes);
  for (std::int64_t half = kLanes / 2; half >= 1; half /= 2) {
    __syncthreads();
    impl::kernels::tree_level<Acc, Op>(p, kLanes, half, threadIdx.x);
  }
  if (threadIdx.x != 0) return;
  if (blocks == 1) static_cast<typename Op::out_t*>(out)[off[0]] = Op::project(p[0]);
  else static_cast<Acc*>(partials)[blockIdx.x] = p[0];
}

// Output blockIdx.x from its blocks' partial sums, combined as one more tree.
template <typename T>
__global__ void __launch_bounds__(impl::kernels::kDeviceSumMaxBlocks)
    sum_blocks_kernel(Geometry outer, void* out, std::int64_t blocks, const void* partials) {
  using Op = impl::kernels::SumOp<T>;
  using Acc = typename Op::acc_t;
  __shared__ Acc p[impl::kernels::kDeviceSumMaxBlocks];
  const std::int64_t o = blockIdx.x;
  if (threadIdx.x < blocks) p[threadIdx.x] = static_cast<const Acc*>(partials)[o * blocks + threadIdx.x];
  for (std::int64_t half = impl::kernels::tree_top(blocks); half >= 1; half /= 2) {
    __syncthreads();
    impl::kernels::tree_level<Acc, Op>(p, blocks, half, threadIdx.x);
  }
  if (threadIdx.x != 0) return;
  std::int64_t off[kMaxOperands];
  impl::kernels::offsets(outer, o, off);
  static_cast<typename Op::out_t*>(out)[off[0]] = Op::project(p[0]);
}

}  // namespace

const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

const char* run_pointwise(const impl::kernels::PointwiseCall& call) {
  Launcher launcher;
  impl::kernels::run_pointwise(launcher, call);
  if (launcher.copy_error != cudaSuccess) {
    cudaGetLastError();  // the copy recorded it too: the next launch must not read it as its own
    return cudaGetErrorString(launcher.copy_error);
  }
  return launched();
}

std::size_t sum_scratch_bytes(const impl::kernels::SumCall& call) {
  const std::int64_t blocks = impl::kernels::device_sum_plan(call.inner.numel).blocks;
  return blocks > 1 ? static_cast<std::size_t>(call.outer.numel * blocks) * sizeof(std::uint64_t) : 0;
}

const char* run_sum(const impl::kernels::SumCall& call, void* scratch) {
  if (call.outer.numel == 0) return nullptr;
  const std::int64_t blocks = impl::kernels::device_sum_plan(call.inner.numel).blocks;
  if (call.outer.numel * blocks >= (std::int64_t{1} << 31)) return "sum: too many blocks for one launch";
  impl::dispatch(call.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (blocks == 0) {
      const auto grid = static_cast<unsigned>((call.outer.numel + kThreads - 1) / kThreads);
      sum_kernel<T><<<grid, kThreads>>>(call.outer, call.inner, call.out, call.in);
      return;
    }
    const auto grid = static_cast<unsigned>(call.outer.numel * blocks);
    sum_lanes_kernel<T><<<grid, impl::kernels::kDeviceSumBlockLanes>>>(call.outer, call.inner, call.out, call.in,
                                                                         blocks, scratch);
    if (blocks > 1)
      sum_blocks_kernel<T><<<static_cast<unsigned>(call.outer.numel), impl::kernels::kDeviceSumMaxBlocks>>>(
          call.outer, call.out, blocks, scratch);
  });
  return launched();
}

}  // namespace parity::impl::cuda::kernels
