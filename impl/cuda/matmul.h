// The CUDA launcher of impl/kernels/matmul.h behind a plain interface (no impl types), so that matmul.cu compiles
// as C++17 under nvcc.
#pragma once
#include <cstdint>

#include "impl/kernels/matmul.h"

namespace parity::impl::cuda::kernels {

// The element types the device kernel is built for.
enum class MatmulElement : int { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

// out[n] = a[n] @ b[n] over the geometry g (impl/kernels/matmul.h; a batch stride of 0 repeats one matrix), all
// three on the device, each element summed with `rounding`'s roundings. Returns an error string, or nullptr on
// success.
const char* matmul(MatmulElement type, impl::kernels::MatmulRounding rounding, void* out, const void* a, const void* b,
                   const impl::kernels::MatmulGeometry& g);

}  // namespace parity::impl::cuda::kernels
