// Builds without a CUDA compiler: no device, and a clear error when one is asked for. Host-backed cuda memory
// (impl/cuda/cuda_runtime.h) still works.
#include "impl/cuda/device.h"
#include "impl/error.h"

namespace parity::impl::cuda::device {

namespace {
[[noreturn]] void no_cuda() {
  fail(ErrorKind::Device, "parity was built without CUDA (no nvcc at configure time); CUDA tensors are unavailable");
}
}  // namespace

int count() { return 0; }
bool context_usable() { return true; }
void synchronize() {}  // no device: nothing was queued
Allocator& allocator() { no_cuda(); }
void run_pointwise(const kernels::PointwiseCall&) { no_cuda(); }
void run_sum(const kernels::SumCall&) { no_cuda(); }
void matmul(const Tensor&, const Tensor&, const Tensor&, impl::kernels::MatmulRounding) { no_cuda(); }
std::int64_t gather(const kernels::IndexCall&) { no_cuda(); }
std::int64_t scatter(const kernels::IndexCall&, bool) { no_cuda(); }
std::vector<std::int64_t> nonzero_counts(const kernels::NonzeroCall&) { no_cuda(); }
void nonzero_write(const kernels::NonzeroCall&, const std::vector<std::int64_t>&) { no_cuda(); }
void upload(void*, const void*, std::size_t) { no_cuda(); }
void download(void*, const void*, std::size_t) { no_cuda(); }

}  // namespace parity::impl::cuda::device
