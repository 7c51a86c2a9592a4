// A bounded cache of freed blocks of one kind of memory, by size class: what makes a repeated large allocation (a
// 64 MiB clone in a loop on the CPU, every tensor on a CUDA device) reuse a block instead of asking the system
// again, which costs page faults on the CPU and a cudaMalloc and a synchronising cudaFree on a device. The CPU's
// caching allocator (impl/cpu/caching_allocator.h) and the CUDA device's (impl/cuda/device.cpp) are its two users.
// Storage identity is the Storage::Impl object, never the data pointer, so a block that comes back to a new
// storage changes nothing observable.
#pragma once
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace parity::impl {

class BlockPool {
 public:
  // Where blocks come from and go back to (mmap/munmap, cudaMalloc/cudaFree): map returns null when it cannot.
  struct Pages {
    void* (*map)(std::size_t bytes);
    void (*unmap)(void* p, std::size_t bytes);
  };
  struct Options {
    // The smallest step between size classes: a class is at most 1/8 over its request, and a multiple of this.
    std::size_t min_step = 4096;
    // The most bytes the pool keeps unused: giving a block back beyond it returns older cached blocks first.
    std::size_t max_cached_bytes = std::size_t{256} << 20;
  };

  BlockPool(Options options, Pages pages) : options_(options), pages_(pages) {}
  ~BlockPool() { release(); }  // returns the cached blocks (blocks still in use must be given back before)
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // The bytes a block serving nbytes occupies: its size class, so that a freed block serves any later request of
  // its class.
  std::size_t block_bytes(std::size_t nbytes) const;
  // A block of block_bytes(nbytes): a cached one (reused = true) or a fresh one from map. A failed map returns the
  // cache and tries once more; null when that fails too (the caller decides what out of memory means).
  void* take(std::size_t nbytes, bool& reused);
  // Caches a block taken for nbytes, or unmaps it when it alone is over the pool's bound.
  void give(void* p, std::size_t nbytes) noexcept;
  std::size_t cached_bytes() const;
  void release();  // unmaps every cached block

 private:
  void drop_until_fits(std::size_t bytes);  // with mutex_ held

  const Options options_;
  const Pages pages_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> free_;  // block bytes -> cached blocks of that size class
  std::size_t cached_bytes_ = 0;
};

}  // namespace parity::impl
