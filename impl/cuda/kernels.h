// Device kernels behind a plain interface (no impl type but impl/kernels' calls, which are nvcc-clean), so that
// .cu files compile as C++17 under nvcc. Each returns an error string, or nullptr on success.
#pragma once
#include <cstddef>
#include <cstdint>

#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"

namespace parity::impl::cuda::kernels {

inline constexpr int kMaxDims = 8;

// dst[i] = src[i] for every logical index i of `sizes`; elements of elem_size bytes (1, 4 or 8).
// Returns an error string, or nullptr on success.
const char* strided_copy(void* dst, const void* src, std::size_t elem_size, int ndim, const std::int64_t* sizes,
                         const std::int64_t* dst_strides, const std::int64_t* src_strides);

// impl/kernels' functors, launched over the call's geometry (impl/cuda/pointwise.cu).
const char* run_pointwise(const impl::kernels::PointwiseCall& call);
const char* run_sum(const impl::kernels::SumCall& call);

}  // namespace parity::impl::cuda::kernels
