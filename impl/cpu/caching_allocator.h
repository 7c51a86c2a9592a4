// impl's CPU allocator: small storages (up to 4 KiB) from a per-thread cache of freed blocks over operator new, large
// ones from a BlockPool of mapped pages (impl/block_pool.h), so that a repeated large allocation (a 64 MiB clone in
// a loop) reuses mapped pages instead of paying a page fault per 4 KiB of fresh memory each time. A block that
// comes back to a new storage has its bytes zeroed again unless the caller promised (Fill::Unwritten) to write
// every one of them first.
#pragma once
#include <cstddef>
#include <cstring>

#include "impl/block_pool.h"
#include "impl/storage.h"

namespace parity::impl::cpu {

class CachingAllocator final : public Allocator {
 public:
  struct Options {
    // Blocks of at least this many bytes are cached here; smaller ones come from operator new, through a
    // per-thread cache of up to 32 freed blocks per 64-byte class up to 4 KiB (an aligned new and delete cost more
    // than a one-element op's kernel).
    std::size_t min_cached_block = std::size_t{1} << 20;
    // The most bytes the cache keeps unused: freeing a block beyond it gives older cached blocks back first.
    std::size_t max_cached_bytes = std::size_t{256} << 20;
  };
  // Where large blocks' pages come from (mmap and munmap by default): map returns null when it cannot. Tests put a
  // bounded one here to make an allocation fail.
  using Pages = BlockPool::Pages;
  static Pages system_pages();

  CachingAllocator();
  explicit CachingAllocator(Options options, Pages pages = system_pages());
  // Its pool gives the cached blocks back (blocks still in use must be freed before).
  ~CachingAllocator() override = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A failed large allocation gives the cache back and tries again; failing still, it calls the new-handler and
  // retries as operator new does (an evaluating process's handler ends it as out of memory), or throws
  // std::bad_alloc when none is set.
  void* allocate(std::size_t nbytes, Fill fill) override;
  void deallocate(void* p, std::size_t nbytes) noexcept override;
  Device device() const override { return Device{DeviceType::CPU, 0}; }
  bool host_addressable() const override { return true; }
  void copy(void* dst, const void* src, std::size_t nbytes) const override { std::memcpy(dst, src, nbytes); }

  // The bytes a large block of nbytes occupies: nbytes rounded up to its size class (at most 1/8 more), so that a
  // freed block serves any later request of its class.
  std::size_t block_bytes(std::size_t nbytes) const { return large_.block_bytes(nbytes); }
  std::size_t cached_bytes() const { return large_.cached_bytes(); }
  void release_cache() { large_.release(); }

 private:
  const Options options_;
  BlockPool large_;
};

}  // namespace parity::impl::cpu
