// The CPU executor of impl/kernels/matmul.h: mm and bmm over any strides, in register tiles over packed operands.
#pragma once
#include "impl/tensor.h"

namespace parity::impl::cpu {

// out[n] = a[n] @ b[n] for 3-d operands (a batch), or out = a @ b for 2-d ones; one dtype, CPU tensors, sizes
// already checked. A 16-bit float sums in float, rounded once, when sum_16bit_in_float
// (VersionGate::ProductsAccumulateInFloat), else rounded at every step.
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_16bit_in_float);

}  // namespace parity::impl::cpu
