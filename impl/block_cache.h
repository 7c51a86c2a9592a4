// BlockCache: small blocks freed by this thread, kept by size class for its next allocations of that class. A
// one-element op makes a handful of small objects (a TensorImpl, a Storage, autograd metadata, a node, its
// storage's bytes) and glibc's malloc and free were a third of its time (perf). Per thread, so no lock; a block
// freed on another thread than the one that allocated it simply joins that thread's cache. Bounded per class; a
// thread's blocks go back to operator delete at its exit, and a block freed after that (during the thread's or
// the process's exit) bypasses the cache.
#pragma once
#include <cstddef>
#include <memory>
#include <new>

namespace parity::impl {

// Blocks of up to Max bytes in classes of Granule bytes, PerClass of each cached, from operator new with Align.
template <std::size_t Granule, std::size_t Max, std::size_t PerClass, std::align_val_t Align>
class BlockCache {
 public:
  static constexpr std::size_t kMax = Max;
  // The bytes a block of n (0 < n <= Max) occupies: its class's size.
  static constexpr std::size_t rounded(std::size_t n) { return (n + Granule - 1) / Granule * Granule; }

  static void* allocate(std::size_t n) {
    const std::size_t bytes = rounded(n);
    Lists& l = lists_;
    const std::size_t c = bytes / Granule - 1;
    if (l.alive && l.count[c] > 0) return l.blocks[c][--l.count[c]];
    return ::operator new(bytes, Align);
  }
  static void deallocate(void* p, std::size_t n) noexcept {
    const std::size_t bytes = rounded(n);
    Lists& l = lists_;
    const std::size_t c = bytes / Granule - 1;
    if (l.alive && l.count[c] < PerClass) {
      l.blocks[c][l.count[c]++] = p;
      return;
    }
    ::operator delete(p, Align);
  }

 private:
  static constexpr std::size_t kClasses = Max / Granule;
  struct Lists {
    void* blocks[kClasses][PerClass];
    std::size_t count[kClasses] = {};
    bool alive = true;
    ~Lists() {
      alive = false;
      for (std::size_t c = 0; c < kClasses; ++c)
        for (std::size_t i = 0; i < count[c]; ++i) ::operator delete(blocks[c][i], Align);
    }
  };
  static inline thread_local Lists lists_;
};

// A standard allocator over one cache of blocks of up to 512 bytes, for impl's small objects: what make_rc makes
// (a TensorImpl, a Storage's, a node, with their counts) and the vectors a node holds. A larger request, or any
// under AddressSanitizer (so that a use after free stays visible to it), goes to operator new.
template <typename T>
struct CachedAllocator {
  using value_type = T;
  using Blocks = BlockCache<16, 512, 64, std::align_val_t{__STDCPP_DEFAULT_NEW_ALIGNMENT__}>;
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kCached = false;
#else
  static constexpr bool kCached = alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;
#endif

  CachedAllocator() = default;
  template <typename U>
  CachedAllocator(const CachedAllocator<U>&) noexcept {}  // NOLINT: rebinding, as std::allocator's
  T* allocate(std::size_t n) {
    if (kCached && n <= Blocks::kMax / sizeof(T)) return static_cast<T*>(Blocks::allocate(n * sizeof(T)));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (kCached && n <= Blocks::kMax / sizeof(T)) Blocks::deallocate(p, n * sizeof(T));
    else std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const CachedAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace parity::impl
