// What the device benchmark (bench/device_bench.cpp) needs of impl's CUDA beyond a Session: a wait for the device,
// so that an iteration's time is the device's, and the ceiling it measures both libraries' copies against.
#pragma once
#include <cstddef>

namespace parity::impl_backend {

// Waits for every kernel and copy queued on CUDA device 0 by anyone in this process (impl and LibTorch share its
// primary context); raises when one of them failed. Nothing to wait for without a device.
void cuda_synchronize();

// Two buffers of device memory and a cudaMemcpy device to device between them: the copy engine's bandwidth, the
// ceiling of a scenario that moves bytes. Raises an impl::Error of kind Device without a device.
class CudaCopyCeiling {
 public:
  explicit CudaCopyCeiling(std::size_t bytes);
  ~CudaCopyCeiling();
  CudaCopyCeiling(const CudaCopyCeiling&) = delete;
  CudaCopyCeiling& operator=(const CudaCopyCeiling&) = delete;
  void copy();  // queued on the device, not waited for
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
  void* src_ = nullptr;
  void* dst_ = nullptr;
};

}  // namespace parity::impl_backend
