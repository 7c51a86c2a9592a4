#include "impl_backend/device_ceiling.h"

#include "impl/cuda/cuda_runtime.h"
#include "impl/storage.h"

namespace parity::impl_backend {

void cuda_synchronize() { impl::cuda::synchronize(); }

// impl's device allocator hands out plain cudaMalloc'd blocks and copies them with cudaMemcpyAsync device to
// device: nothing of impl's kernels is measured here.
CudaCopyCeiling::CudaCopyCeiling(std::size_t bytes) : bytes_(bytes) {
  impl::Allocator& device = impl::cuda_allocator();
  src_ = device.allocate(bytes, impl::Fill::Zeros);
  try {
    dst_ = device.allocate(bytes, impl::Fill::Unwritten);
  } catch (...) {
    device.deallocate(src_, bytes);
    throw;
  }
}

CudaCopyCeiling::~CudaCopyCeiling() {
  impl::Allocator& device = impl::cuda_allocator();
  device.deallocate(dst_, bytes_);
  device.deallocate(src_, bytes_);
}

void CudaCopyCeiling::copy() { impl::cuda_allocator().copy(dst_, src_, bytes_); }

}  // namespace parity::impl_backend
