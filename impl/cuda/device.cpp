// The CUDA runtime behind impl/cuda/device.h. Unrun on a device in this project's CI (no GPU).
#include <cuda_runtime_api.h>

#include "impl/cuda/device.h"
#include "impl/cuda/kernels.h"
#include "impl/cuda/matmul.h"
#include "impl/error.h"
#include "impl/storage.h"

namespace parity::impl::cuda::device {

namespace {
void check_cuda(cudaError_t e, const char* what) {
  PARITY_CHECK(e == cudaSuccess, ErrorKind::Device, std::string(what) + ": " + cudaGetErrorString(e));
}

class CudaAllocator final : public Allocator {
 public:
  // Fill::Zeros is not honoured here yet: cudaMalloc's bytes are unspecified, as they were before Fill existed.
  void* allocate(std::size_t nbytes, Fill) override {
    void* p = nullptr;
    // Plain device memory (never managed memory): a zero-byte storage still gets a distinct pointer.
    check_cuda(cudaMalloc(&p, nbytes == 0 ? 1 : nbytes), "cudaMalloc");
    return p;
  }
  void deallocate(void* p, std::size_t) noexcept override { cudaFree(p); }
  Device device() const override { return Device{DeviceType::CUDA, 0}; }
  bool host_addressable() const override { return false; }
  void copy(void* dst, const void* src, std::size_t nbytes) const override {
    check_cuda(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToDevice), "cudaMemcpy on the device");
  }
};
}  // namespace

int count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

bool context_usable() {
  if (count() > 0 && cudaDeviceSynchronize() != cudaSuccess) {
    cudaGetLastError();  // a sticky error stays whatever is cleared; any other one is gone
    return false;
  }
  return true;
}

Allocator& allocator() {
  PARITY_CHECK(count() > 0, ErrorKind::Device, "no CUDA device is available on this machine (cudaGetDeviceCount found none)");
  static CudaAllocator a;
  return a;
}

void upload(void* device_dst, const void* host_src, std::size_t nbytes) {
  check_cuda(cudaMemcpy(device_dst, host_src, nbytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void download(void* host_dst, const void* device_src, std::size_t nbytes) {
  check_cuda(cudaMemcpy(host_dst, device_src, nbytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

void run_pointwise(const impl::kernels::PointwiseCall& call) {
  const char* err = kernels::run_pointwise(call);
  PARITY_CHECK(err == nullptr, ErrorKind::Device, std::string("CUDA pointwise kernel: ") + (err ? err : ""));
}

void run_sum(const impl::kernels::SumCall& call) {
  const char* err = kernels::run_sum(call);
  PARITY_CHECK(err == nullptr, ErrorKind::Device, std::string("CUDA sum kernel: ") + (err ? err : ""));
}

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, impl::kernels::MatmulRounding rounding) {
  kernels::MatmulElement type = kernels::MatmulElement::Float32;
  switch (out.dtype()) {
    case ScalarType::Bool: type = kernels::MatmulElement::Bool; break;
    case ScalarType::Int32: type = kernels::MatmulElement::Int32; break;
    case ScalarType::Int64: type = kernels::MatmulElement::Int64; break;
    case ScalarType::Float32: type = kernels::MatmulElement::Float32; break;
    case ScalarType::Float64: type = kernels::MatmulElement::Float64; break;
    case ScalarType::Float16: type = kernels::MatmulElement::Float16; break;
    case ScalarType::BFloat16: type = kernels::MatmulElement::BFloat16; break;
  }
  auto element = [](const Tensor& t) { return static_cast<char*>(t.storage().data()) + t.offset() * element_size(t.dtype()); };
  const char* err = kernels::matmul(type, rounding, element(out), element(a), element(b),
                                    impl::kernels::matmul_geometry(out, a, b));
  PARITY_CHECK(err == nullptr, ErrorKind::Device, std::string("matmul: ") + (err ? err : ""));
}

}  // namespace parity::impl::cuda::device
