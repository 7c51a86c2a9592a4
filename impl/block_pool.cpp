#include "impl/block_pool.h"

#include <algorithm>
#include <bit>
#include <iterator>

namespace parity::impl {

std::size_t BlockPool::block_bytes(std::size_t nbytes) const {
  nbytes = std::max<std::size_t>(nbytes, 1);
  const std::size_t step = std::max(std::bit_floor(nbytes) / 8, options_.min_step);
  return (nbytes + step - 1) / step * step;
}

void* BlockPool::take(std::size_t nbytes, bool& reused) {
  const std::size_t bytes = block_bytes(nbytes);
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(bytes);
    if (it != free_.end()) {
      void* p = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) free_.erase(it);
      cached_bytes_ -= bytes;
      reused = true;
      return p;
    }
  }
  reused = false;
  if (void* p = pages_.map(bytes)) return p;
  // Cached blocks count against the memory the system has left (an address-space limit, a device's memory): give
  // them back before this request is called a failure.
  release();
  return pages_.map(bytes);
}

void BlockPool::give(void* p, std::size_t nbytes) noexcept {
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

void BlockPool::drop_until_fits(std::size_t bytes) {
  // The largest blocks first: the fewest unmaps to make room.
  while (cached_bytes_ + bytes > options_.max_cached_bytes && !free_.empty()) {
    auto it = std::prev(free_.end());
    pages_.unmap(it->second.back(), it->first);
    cached_bytes_ -= it->first;
    it->second.pop_back();
    if (it->second.empty()) free_.erase(it);
  }
}

std::size_t BlockPool::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_bytes_;
}

void BlockPool::release() {
  std::lock_guard lock(mutex_);
  for (auto& [bytes, blocks] : free_)
    for (void* p : blocks) pages_.unmap(p, bytes);
  free_.clear();
  cached_bytes_ = 0;
}

}  // namespace parity::impl
