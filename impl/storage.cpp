#include "impl/storage.h"

#include <cstring>
#include <new>

#include "impl/error.h"

namespace parity::impl {

namespace {
class CpuAllocator final : public Allocator {
  static constexpr std::align_val_t kAlignment{64};

 public:
  void* allocate(std::size_t nbytes) override {
    // 64-byte alignment like c10's CPU allocator; never a null pointer, even for 0 bytes. Through operator new,
    // so that a failure calls the new-handler as every other allocation does (an evaluating process's ends it
    // as out of memory) before it throws std::bad_alloc.
    std::size_t n = (nbytes + 63) / 64 * 64;
    void* p = ::operator new(n == 0 ? 64 : n, kAlignment);
    // Zero-filled, as the oracle asks of LibTorch's allocator: a formula that reads memory it never wrote (as
    // LibTorch's CopySlices does through an as_strided view beyond its base) then gives the same answer in every
    // process, instead of what an earlier case left in a persistent worker.
    std::memset(p, 0, n == 0 ? 64 : n);
    return p;
  }
  void deallocate(void* p) noexcept override { ::operator delete(p, kAlignment); }
  Device device() const override { return Device{DeviceType::CPU, 0}; }
};
}  // namespace

Allocator& cpu_allocator() {
  static CpuAllocator a;
  return a;
}

Storage::Storage(std::size_t nbytes, Allocator& allocator) : impl_(std::make_shared<Impl>()) {
  impl_->allocator = &allocator;
  impl_->nbytes = nbytes;
  impl_->data = allocator.allocate(nbytes);
}

void Storage::grow(std::size_t nbytes) const {
  if (nbytes <= impl_->nbytes) return;
  // The kernels that resize outputs run on the CPU; a device storage would need the device's copy.
  if (impl_->allocator->device().type != DeviceType::CPU) fail(ErrorKind::Device, "resizing a storage is only implemented on the CPU");
  void* data = impl_->allocator->allocate(nbytes);
  std::memcpy(data, impl_->data, impl_->nbytes);
  impl_->allocator->deallocate(impl_->data);
  impl_->data = data;
  impl_->nbytes = nbytes;
}

}  // namespace parity::impl
