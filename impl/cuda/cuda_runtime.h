// impl's CUDA pieces: device memory for Storage, transfers, and the launcher of impl/kernels' kernels (the same
// functors the CPU executor runs). Built only when a CUDA compiler is found; impl/cuda/no_cuda.cpp stands in
// otherwise.
#pragma once
#include <cstdint>

#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"
#include "impl/tensor.h"

namespace parity::impl::cuda {

int device_count();  // 0 when the driver or a device is missing (never throws)
// Whether the process's CUDA context still runs work: false after a sticky error (a device-side assert, an illegal
// address), which fails every later CUDA call of the process, LibTorch's too (they share the primary context).
// Never throws; true in a build without CUDA.
bool context_usable();

// A pointwise call or a sum over device memory, launched and waited for; a CUDA error raises a Device error.
void run_pointwise(const kernels::PointwiseCall& call);
void run_sum(const kernels::SumCall& call);
// mm/bmm on the device (impl/kernels/matmul.h), as impl::cpu::matmul on the CPU; all three tensors on the device.
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, bool sum_16bit_in_float);

// Host <-> device transfers of a whole tensor; the result is dense in the source's layout order.
Tensor to_device(const Tensor& cpu, int device = 0);
// A host tensor of `cuda`'s layout over a copy of its storage's bytes (as far as the layout reaches), and the way
// back: `host`'s bytes into `cuda`'s storage, as far as both reach. Host code runs on such a mirror as on the
// device tensor itself.
Tensor to_host(const Tensor& cuda);
void write_back(const Tensor& cuda, const Tensor& host);

}  // namespace parity::impl::cuda
