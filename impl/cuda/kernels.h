// Device kernels behind a plain interface (no impl type but impl/kernels' calls, which are nvcc-clean), so that
// .cu files compile as C++17 under nvcc. Each returns an error string, or nullptr on success.
#pragma once
#include <cstddef>
#include <cstdint>

#include "impl/kernels/index.h"
#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"

namespace parity::impl::cuda::kernels {

// The error of the last launch on this thread that never started (a bad configuration), or nullptr. Kernels are not
// waited for: an error one raises while it runs surfaces at the next synchronous transfer (impl/cuda/device.cpp).
const char* launched();

// impl/kernels' functors, launched over the call's geometry (impl/cuda/pointwise.cu).
const char* run_pointwise(const impl::kernels::PointwiseCall& call);
// A sum needs sum_scratch_bytes(call) of device memory for its blocks' partial sums (0: none).
std::size_t sum_scratch_bytes(const impl::kernels::SumCall& call);
const char* run_sum(const impl::kernels::SumCall& call, void* scratch);

// Advanced indexing (impl/kernels/index.h, impl/cuda/index.cu). gather lowers *first_bad (device memory, holding
// the walk's length before) to the first walk position whose index is out of range; scatter sets it to that
// position, or -1. nonzero: each chunk's count, then each chunk's hits from its first row (firsts, device memory).
const char* gather(const impl::kernels::IndexCall& call, std::int64_t* first_bad);
const char* scatter(const impl::kernels::IndexCall& call, bool accumulate, std::int64_t* first_bad);
const char* nonzero_count(const impl::kernels::NonzeroCall& call, std::int64_t* counts);
const char* nonzero_write(const impl::kernels::NonzeroCall& call, const std::int64_t* firsts);

}  // namespace parity::impl::cuda::kernels
