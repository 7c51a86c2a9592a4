#include "impl/cpu/caching_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>
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

CachingAllocator::CachingAllocator(Options options, Pages pages) : options_(options), pages_(pages) {}

CachingAllocator::~CachingAllocator() { release_cache(); }

std::size_t CachingAllocator::block_bytes(std::size_t nbytes) const {
  nbytes = std::max<std::size_t>(nbytes, 1);
  const std::size_t step = std::max(std::bit_floor(nbytes) / 8, kPage);
  return (nbytes + step - 1) / step * step;
}

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
  const std::size_t bytes = block_bytes(nbytes);
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(bytes);
    if (it != free_.end()) {
      void* p = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) free_.erase(it);
      cached_bytes_ -= bytes;
      // A reused block holds what its last storage left: zeroed as a fresh one would read.
      if (fill == Fill::Zeros) std::memset(p, 0, bytes);
      return p;
    }
  }
  return map_block(bytes);
}

void* CachingAllocator::map_block(std::size_t bytes) {
  if (void* p = pages_.map(bytes)) return p;
  // Cached blocks count against the address-space limit of an evaluating process: give them back before this
  // allocation is called a failure.
  release_cache();
  for (;;) {
    if (void* p = pages_.map(bytes)) return p;
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
  const std::size_t bytes = block_bytes(nbytes);
  std::lock_guard lock(mutex_);
  if (bytes > options_.max_cached_bytes) {
    pages_.unmap(p, bytes);
    return;
  }
  drop_until_fits(bytes);
  // A vector's growth can throw: the block then simply is not cached.
  try {
    free_[bytes].push_back(p);
  } catch (...) {
    pages_.unmap(p, bytes);
    return;
  }
  cached_bytes_ += bytes;
}

void CachingAllocator::drop_until_fits(std::size_t bytes) {
  // The largest blocks first: the fewest unmaps to make room.
  while (cached_bytes_ + bytes > options_.max_cached_bytes && !free_.empty()) {
    auto it = std::prev(free_.end());
    pages_.unmap(it->second.back(), it->first);
    cached_bytes_ -= it->first;
    it->second.pop_back();
    if (it->second.empty()) free_.erase(it);
  }
}

std::size_t CachingAllocator::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

void CachingAllocator::release_cache() {
  std::lock_guard lock(mutex_);
  for (auto& [bytes, blocks] : free_)
    for (void* p : blocks) pages_.unmap(p, bytes);
  free_.clear();
  cached_bytes_ = 0;
}

}  // namespace parity::impl::cpu
