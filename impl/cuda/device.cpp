// The CUDA runtime behind impl/cuda/device.h. Unrun on a device in this project's CI (no GPU). Kernels are queued
// on the legacy default stream and not waited for: a transfer to the host (a synchronous cudaMemcpy) waits for
// every kernel queued before it, and reports an error that one of them raised, as LibTorch's CUDA ops do.
#include <cuda_runtime_api.h>

#include <string>

#include "impl/block_pool.h"
#include "impl/cuda/device.h"
#include "impl/cuda/kernels.h"
#include "impl/cuda/matmul.h"
#include "impl/error.h"
#include "impl/storage.h"

namespace parity::impl::cuda::device {

namespace {
void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  // The runtime records it as the last error too: cleared, so that the next launch does not report it as its own.
  cudaGetLastError();
  fail(ErrorKind::Device, std::string(what) + ": " + cudaGetErrorString(e));
}

// What a launcher of impl/cuda/kernels.h returned: nullptr, or the error raised as a Device error.
void check_launch(const char* err, const char* what) {
  PARITY_CHECK(err == nullptr, ErrorKind::Device, std::string(what) + ": " + (err ? err : ""));
}

void* device_malloc(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) return p;
  cudaGetLastError();  // out of memory is not sticky: clear it, so that the pool may free its cache and retry
  // Anything else (a context a kernel broke) is no shortage of memory: said as it is.
  check_cuda(e == cudaErrorMemoryAllocation ? cudaSuccess : e, "cudaMalloc");
  return nullptr;
}
void device_free(void* p, std::size_t) { cudaFree(p); }

// The device's memory through a BlockPool, as c10's CUDA caching allocator keeps freed blocks: a cudaMalloc costs
// tens of microseconds and a cudaFree synchronises the device, once per tensor otherwise. Every launch and copy is
// on the legacy default stream, so a block given back while a kernel still reads it is only reused by work
// queued after that kernel.
class CudaAllocator final : public Allocator {
 public:
  void* allocate(std::size_t nbytes, Fill fill) override {
    bool reused = false;
    // Plain device memory (never managed memory): a zero-byte storage still gets a distinct block.
    void* p = pool_.take(nbytes, reused);
    PARITY_CHECK(p != nullptr, ErrorKind::Device,
                 "CUDA out of memory: cudaMalloc of " + std::to_string(pool_.block_bytes(nbytes)) +
                     " bytes failed after the cached blocks were freed");
    // Neither a fresh nor a reused block reads as zero by itself: zeroed as the CPU's are (impl/storage.h's Fill).
    if (fill == Fill::Zeros) {
      const cudaError_t e = cudaMemsetAsync(p, 0, pool_.block_bytes(nbytes));
      if (e != cudaSuccess) pool_.give(p, nbytes);
      check_cuda(e, "cudaMemsetAsync");
    }
    return p;
  }
  void deallocate(void* p, std::size_t nbytes) noexcept override { pool_.give(p, nbytes); }
  Device device() const override { return Device{DeviceType::CUDA, 0}; }
  bool host_addressable() const override { return false; }
  void copy(void* dst, const void* src, std::size_t nbytes) const override {
    check_cuda(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync on the device");
  }

 private:
  // 512-byte classes at the small end, as c10's; a few GiB kept per process, since a campaign's workers share one
  // device (a failed cudaMalloc frees the cache and retries).
  BlockPool pool_{{.min_step = 512, .max_cached_bytes = std::size_t{4} << 30}, {&device_malloc, &device_free}};
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

void synchronize() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

Allocator& allocator() {
  PARITY_CHECK(count() > 0, ErrorKind::Device, "no CUDA device is available on this machine (cudaGetDeviceCount found none)");
  // Never destroyed, as the CPU's: storages that static objects hold are given back after every static would be,
  // and its cached blocks go when the process's context does.
  static auto* a = new CudaAllocator();
  return *a;
}

void upload(void* device_dst, const void* host_src, std::size_t nbytes) {
  check_cuda(cudaMemcpy(device_dst, host_src, nbytes, cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void download(void* host_dst, const void* device_src, std::size_t nbytes) {
  check_cuda(cudaMemcpy(host_dst, device_src, nbytes, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

void run_pointwise(const impl::kernels::PointwiseCall& call) {
  check_launch(kernels::run_pointwise(call), "CUDA pointwise kernel");
}

void run_sum(const impl::kernels::SumCall& call) {
  const std::size_t scratch_bytes = kernels::sum_scratch_bytes(call);
  // Given back as soon as the launch is queued: work queued later on the stream reuses it only after the sum ran.
  Storage scratch = scratch_bytes == 0 ? Storage() : Storage(scratch_bytes, allocator(), Fill::Unwritten);
  check_launch(kernels::run_sum(call, scratch.data()), "CUDA sum kernel");
}

namespace {
// A word of device memory the host sets, a kernel writes and the host reads back (the read waits for the kernel).
class DeviceWord {
 public:
  explicit DeviceWord(std::int64_t initial) : storage_(sizeof(std::int64_t), allocator(), Fill::Unwritten) {
    upload(storage_.data(), &initial, sizeof initial);
  }
  std::int64_t* get() const { return static_cast<std::int64_t*>(storage_.data()); }
  std::int64_t read() const {
    std::int64_t v = 0;
    download(&v, storage_.data(), sizeof v);
    return v;
  }

 private:
  Storage storage_;
};
}  // namespace

std::int64_t gather(const impl::kernels::IndexCall& call) {
  DeviceWord first_bad(call.geometry.numel);
  check_launch(kernels::gather(call, first_bad.get()), "CUDA gather kernel");
  const std::int64_t at = first_bad.read();
  return at < call.geometry.numel ? at : -1;
}

std::int64_t scatter(const impl::kernels::IndexCall& call, bool accumulate) {
  DeviceWord first_bad(-1);
  check_launch(kernels::scatter(call, accumulate, first_bad.get()), "CUDA scatter kernel");
  return first_bad.read();
}

std::vector<std::int64_t> nonzero_counts(const impl::kernels::NonzeroCall& call) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(impl::kernels::nonzero_chunks(call.numel)));
  if (counts.empty()) return counts;
  Storage device_counts(counts.size() * sizeof(std::int64_t), allocator(), Fill::Unwritten);
  check_launch(kernels::nonzero_count(call, static_cast<std::int64_t*>(device_counts.data())),
               "CUDA nonzero count kernel");
  download(counts.data(), device_counts.data(), counts.size() * sizeof(std::int64_t));
  return counts;
}

void nonzero_write(const impl::kernels::NonzeroCall& call, const std::vector<std::int64_t>& firsts) {
  if (firsts.empty()) return;
  Storage device_firsts(firsts.size() * sizeof(std::int64_t), allocator(), Fill::Unwritten);
  upload(device_firsts.data(), firsts.data(), firsts.size() * sizeof(std::int64_t));
  check_launch(kernels::nonzero_write(call, static_cast<const std::int64_t*>(device_firsts.data())),
               "CUDA nonzero write kernel");
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
  check_launch(kernels::matmul(type, rounding, element(out), element(a), element(b),
                               impl::kernels::matmul_geometry(out, a, b)),
               "matmul");
}

}  // namespace parity::impl::cuda::device
