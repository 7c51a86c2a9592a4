// Builds without a CUDA compiler: impl runs on the CPU only and says so when asked for a device.
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/storage.h"

namespace parity::impl {

namespace {
[[noreturn]] void no_cuda() {
  fail(ErrorKind::Device, "parity was built without CUDA (no nvcc at configure time); CUDA tensors are unavailable");
}
}  // namespace

bool cuda_available() { return false; }
Allocator& cuda_allocator() { no_cuda(); }

namespace cuda {
int device_count() { return 0; }
bool context_usable() { return true; }
void run_pointwise(const kernels::PointwiseCall&) { no_cuda(); }
void run_sum(const kernels::SumCall&) { no_cuda(); }
void matmul(const Tensor&, const Tensor&, const Tensor&, bool) { no_cuda(); }
Tensor to_device(const Tensor&, int) { no_cuda(); }
Tensor to_host(const Tensor&) { no_cuda(); }
void write_back(const Tensor&, const Tensor&) { no_cuda(); }
}  // namespace cuda

}  // namespace parity::impl
