// Storage: a shared buffer on a device, owned through its allocator. Views share one Storage.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "impl/rc.h"

namespace parity::impl {

enum class DeviceType : std::uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  std::string str() const { return type == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index); }
  bool operator==(const Device&) const = default;
};

// What a new storage's bytes hold before anything writes them.
enum class Fill : std::uint8_t {
  // All zero, as LibTorch's allocator gives them under the oracle's zero-fill flag: a formula that reads memory it
  // never wrote then gives the same answer in every process.
  Zeros,
  // Whatever the block held before (a reused block: another storage's bytes). Only for a caller that writes every
  // byte before anything can read one: Tensor::allocate_uninitialized.
  Unwritten,
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(std::size_t nbytes, Fill fill) = 0;
  // nbytes: what allocate was asked for.
  virtual void deallocate(void* p, std::size_t nbytes) noexcept = 0;
  virtual Device device() const = 0;
  // Whether the host reads and writes this memory directly: the CPU's, and host-backed cuda memory
  // (impl/cuda/cuda_runtime.h); never a device's.
  virtual bool host_addressable() const = 0;
  // Copies nbytes between two blocks of this allocator's memory (a storage that grows keeps its bytes).
  virtual void copy(void* dst, const void* src, std::size_t nbytes) const = 0;
};

Allocator& cpu_allocator();
// Gives back the freed large blocks the CPU allocator keeps for reuse. An impl session does at its end: the
// oracle's session that runs next in the same evaluating process, under the same address-space cap, then has the
// memory it would have had without impl's cache.
void release_cpu_cache();
std::size_t cpu_cached_bytes();  // what the CPU allocator holds for reuse now
// Where new cuda storages come from: the device's memory, or host memory under a cuda::HostBackedScope
// (impl/cuda/cuda_runtime.h). An Error of kind Device when neither is there.
Allocator& cuda_allocator();
bool cuda_available();  // a CUDA device is present (host-backed memory does not count)

class Storage {
 public:
  Storage() = default;
  Storage(std::size_t nbytes, Allocator& allocator, Fill fill = Fill::Zeros);
  void* data() const { return impl_ ? impl_->data : nullptr; }
  std::size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_ ? impl_->device : Device{}; }
  bool host_addressable() const { return !impl_ || impl_->allocator->host_addressable(); }
  const void* key() const { return impl_.get(); }  // identity: views share it
  bool defined() const { return static_cast<bool>(impl_); }
  long use_count() const { return impl_.use_count(); }  // tensors over it (StorageImpl's refcount)
  // resize_'s growth (maybe_resize_storage_cpu): this same storage, which every tensor over it shares, now holds
  // nbytes, its old bytes kept and the new ones zero (uninitialised in LibTorch: nothing reads them unwritten).
  void grow(std::size_t nbytes) const;

 private:
  struct Impl {
    void* data = nullptr;
    std::size_t nbytes = 0;
    Allocator* allocator = nullptr;
    Device device;  // the allocator's, kept here: every op asks for it, often several times
    ~Impl() {
      if (data) allocator->deallocate(data, nbytes);
    }
  };
  Rc<Impl> impl_;
};

}  // namespace parity::impl
