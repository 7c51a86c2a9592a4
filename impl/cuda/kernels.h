// Device kernels behind a plain interface (no impl types), so that .cu files compile as C++17 under nvcc.
#pragma once
#include <cstddef>
#include <cstdint>

namespace parity::impl::cuda::kernels {

inline constexpr int kMaxDims = 8;

// dst[i] = src[i] for every logical index i of `sizes`; elements of elem_size bytes (1, 4 or 8).
// Returns an error string, or nullptr on success.
const char* strided_copy(void* dst, const void* src, std::size_t elem_size, int ndim, const std::int64_t* sizes,
                         const std::int64_t* dst_strides, const std::int64_t* src_strides);

}  // namespace parity::impl::cuda::kernels
