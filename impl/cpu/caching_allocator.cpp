#include "impl/cpu/caching_allocator.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

#include "impl/block_cache.h"

namespace parity::impl::cpu {

namespace {
constexpr std::align_val_t kAlignment{64};  // c10's CPU allocator's alignment (pages are more than that)
constexpr std::size_t kPage = 4096;

void* map_pages(std::size_t bytes) {
  // Fresh anonymous pages read as zero, so a fresh block needs no memset for Fill::Zeros.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
void unmap_pages(void* p, std::size_t bytes) { ::munmap(p, bytes); }

// Small storages' bytes (up to 4 KiB, in 64-byte classes): an aligned operator new and its delete cost glibc a
// memalign and a consolidating free, more than the whole of a one-element op otherwise.
using SmallBlocks = BlockCache<64, 4096, 32, kAlignment>;
}  // namespace

CachingAllocator::Pages CachingAllocator::system_pages() { return Pages{&map_pages, &unmap_pages}; }

CachingAllocator::CachingAllocator() : CachingAllocator(Options{}) {}

CachingAllocator::CachingAllocator(Options options, Pages pages)
    : options_(options), large_({.min_step = kPage, .max_cached_bytes = options.max_cached_bytes}, pages) {}

void* CachingAllocator::allocate(std::size_t nbytes, Fill fill) {
  if (nbytes < options_.min_cached_block) {
    // Never a null pointer, even for 0 bytes. Through operator new, so that a failure calls the new-handler as
    // every other allocation does before it throws std::bad_alloc.
    const std::size_t n = SmallBlocks::rounded(nbytes == 0 ? 1 : nbytes);
    void* p = n <= SmallBlocks::kMax ? SmallBlocks::allocate(n) : ::operator new(n, kAlignment);
    // Zero-filled unless promised otherwise, as the oracle asks of LibTorch's allocator: a formula that reads
    // memory it never wrote (as LibTorch's CopySlices does through an as_strided view beyond its base) then gives
    // the same answer in every process, instead of what an earlier case left in a persistent worker.
    if (fill == Fill::Zeros) std::memset(p, 0, n);
    return p;
  }
  for (;;) {
    bool reused = false;
    if (void* p = large_.take(nbytes, reused)) {
      // A reused block holds what its last storage left: zeroed as a fresh one (fresh pages) reads.
      if (reused && fill == Fill::Zeros) std::memset(p, 0, large_.block_bytes(nbytes));
      return p;
    }
    // What operator new does when it cannot allocate.
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void CachingAllocator::deallocate(void* p, std::size_t nbytes) noexcept {
  if (nbytes < options_.min_cached_block) {
    const std::size_t n = SmallBlocks::rounded(nbytes == 0 ? 1 : nbytes);
    if (n <= SmallBlocks::kMax) SmallBlocks::deallocate(p, n);
    else ::operator delete(p, kAlignment);
    return;
  }
  large_.give(p, nbytes);
}

}  // namespace parity::impl::cpu
