#include "impl/storage.h"

#include "impl/cpu/caching_allocator.h"
#include "impl/error.h"

namespace parity::impl {

namespace {
cpu::CachingAllocator& caching_cpu_allocator() {
  // Never destroyed: storages that static objects hold are freed after every static would be.
  static auto* a = new cpu::CachingAllocator();
  return *a;
}
}  // namespace

Allocator& cpu_allocator() { return caching_cpu_allocator(); }

void release_cpu_cache() { caching_cpu_allocator().release_cache(); }

std::size_t cpu_cached_bytes() { return caching_cpu_allocator().cached_bytes(); }

Storage::Storage(std::size_t nbytes, Allocator& allocator, Fill fill) : impl_(make_rc<Impl>()) {
  impl_->allocator = &allocator;
  impl_->device = allocator.device();
  impl_->data = allocator.allocate(nbytes, fill);
  impl_->nbytes = nbytes;
}

void Storage::grow(std::size_t nbytes) const {
  if (nbytes <= impl_->nbytes) return;
  void* data = impl_->allocator->allocate(nbytes, Fill::Zeros);
  impl_->allocator->copy(data, impl_->data, impl_->nbytes);
  impl_->allocator->deallocate(impl_->data, impl_->nbytes);
  impl_->data = data;
  impl_->nbytes = nbytes;
}

}  // namespace parity::impl
