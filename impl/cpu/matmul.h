// The CPU executor of impl/kernels/matmul.h: mm and bmm over any strides, in register tiles over packed operands.
#pragma once
#include "impl/kernels/matmul.h"
#include "impl/tensor.h"

namespace parity::impl::cpu {

// out[n] = a[n] @ b[n] for 3-d operands (a batch), or out = a @ b for 2-d ones; one dtype, CPU tensors, sizes
// already checked; each element's products summed with `rounding`'s roundings (float and double by impl/cpu/gemm.h).
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, kernels::MatmulRounding rounding);

}  // namespace parity::impl::cpu
