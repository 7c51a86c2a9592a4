// Storage: a shared buffer on a device, owned through its allocator. Views share one Storage.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace parity::impl {

enum class DeviceType : std::uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  std::string str() const { return type == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index); }
  bool operator==(const Device&) const = default;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(std::size_t nbytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual Device device() const = 0;
};

Allocator& cpu_allocator();
// The CUDA allocator, or an Error of kind Device when this build or this machine has no CUDA device.
Allocator& cuda_allocator();
bool cuda_available();

class Storage {
 public:
  Storage() = default;
  Storage(std::size_t nbytes, Allocator& allocator);
  void* data() const { return impl_ ? impl_->data : nullptr; }
  std::size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_ ? impl_->allocator->device() : Device{}; }
  const void* key() const { return impl_.get(); }  // identity: views share it
  bool defined() const { return impl_ != nullptr; }
  long use_count() const { return impl_.use_count(); }  // tensors over it (StorageImpl's refcount)
  // resize_'s growth (maybe_resize_storage_cpu): this same storage, which every tensor over it shares, now holds
  // nbytes, its old bytes kept and the new ones zero (uninitialised in LibTorch: nothing reads them unwritten).
  void grow(std::size_t nbytes) const;

 private:
  struct Impl {
    void* data = nullptr;
    std::size_t nbytes = 0;
    Allocator* allocator = nullptr;
    ~Impl() {
      if (data) allocator->deallocate(data);
    }
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace parity::impl
