// What only a CUDA device does: its memory, its launches and the transfers to and from it. impl/cuda/device.cpp
// implements it over the CUDA runtime in a build with nvcc; impl/cuda/no_cuda.cpp stands in otherwise. Everything
// else of impl's CUDA (which memory a cuda tensor gets, the device rules of its ops) is impl/cuda/cuda_runtime.h's,
// and runs on the CPU too, over host-backed cuda memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "impl/kernels/index.h"
#include "impl/kernels/matmul.h"
#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"
#include "impl/storage.h"
#include "impl/tensor.h"

namespace parity::impl::cuda::device {

int count();  // 0 when the driver or a device is missing (never throws)
// false after a sticky error (a device-side assert, an illegal address); never throws; true without CUDA.
bool context_usable();
void synchronize();  // cudaDeviceSynchronize; an error raises a Device error
// The device's memory, or an Error of kind Device when this build or this machine has none.
Allocator& allocator();

// Queued over device memory, not waited for; a launch that fails raises a Device error, and an error a kernel
// raises while it runs surfaces at the next transfer to the host or synchronize().
void run_pointwise(const kernels::PointwiseCall& call);
void run_sum(const kernels::SumCall& call);
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, impl::kernels::MatmulRounding rounding);

// Advanced indexing (impl/kernels/index.h) over device memory: the walk position of the first out-of-range
// index, or -1. nonzero: the chunks' counts, brought to the host, then the chunks' hits from their first rows.
std::int64_t gather(const kernels::IndexCall& call);
std::int64_t scatter(const kernels::IndexCall& call, bool accumulate);
std::vector<std::int64_t> nonzero_counts(const kernels::NonzeroCall& call);
void nonzero_write(const kernels::NonzeroCall& call, const std::vector<std::int64_t>& firsts);

// nbytes from host memory to device memory, and back.
void upload(void* device_dst, const void* host_src, std::size_t nbytes);
void download(void* host_dst, const void* device_src, std::size_t nbytes);

}  // namespace parity::impl::cuda::device
