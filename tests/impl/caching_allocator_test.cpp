// impl's CPU caching allocator (impl/cpu/caching_allocator.h): large freed blocks come back to later allocations of
// their size class, zeroed unless the caller promised to write them whole, within a cap, and a failed allocation
// gives the cache back before it is a failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "impl/cpu/caching_allocator.h"
#include "impl/ops.h"
#include "impl/tensor.h"

namespace parity::impl {
namespace {

using cpu::CachingAllocator;
constexpr std::size_t kMiB = std::size_t{1} << 20;

bool all_bytes(const void* p, std::size_t n, unsigned char v) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != v) return false;
  return true;
}

// Pages that fail past a budget of mapped bytes.
std::size_t g_mapped = 0, g_budget = 0;
int g_maps = 0;
void* bounded_map(std::size_t bytes) {
  ++g_maps;
  if (g_mapped + bytes > g_budget) return nullptr;
  g_mapped += bytes;
  return CachingAllocator::system_pages().map(bytes);
}
void bounded_unmap(void* p, std::size_t bytes) {
  g_mapped -= bytes;
  CachingAllocator::system_pages().unmap(p, bytes);
}
CachingAllocator::Pages bounded_pages(std::size_t budget) {
  g_mapped = 0;
  g_budget = budget;
  g_maps = 0;
  return {&bounded_map, &bounded_unmap};
}

// Restores the new-handler a test replaces.
struct NewHandlerGuard {
  std::new_handler saved = std::get_new_handler();
  ~NewHandlerGuard() { std::set_new_handler(saved); }
};

TEST(CachingAllocator, FreedLargeBlockComesBackForItsSizeClass) {
  CachingAllocator a;
  void* p = a.allocate(2 * kMiB, Fill::Zeros);
  a.deallocate(p, 2 * kMiB);
  EXPECT_EQ(a.cached_bytes(), 2 * kMiB);
  void* q = a.allocate(2 * kMiB, Fill::Zeros);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.cached_bytes(), 0u);
  // A slightly smaller request of the same class takes the same block; a request of another class does not.
  a.deallocate(q, 2 * kMiB);
  ASSERT_EQ(a.block_bytes(2 * kMiB - 1000), 2 * kMiB);
  void* r = a.allocate(2 * kMiB - 1000, Fill::Zeros);
  EXPECT_EQ(r, p);
  a.deallocate(r, 2 * kMiB - 1000);
  void* s = a.allocate(4 * kMiB, Fill::Zeros);
  EXPECT_NE(s, p);
  EXPECT_EQ(a.cached_bytes(), 2 * kMiB);
  a.deallocate(s, 4 * kMiB);
}

TEST(CachingAllocator, SizeClassesWasteAtMostAnEighth) {
  CachingAllocator a;
  for (std::size_t n : {kMiB, kMiB + 1, 3 * kMiB + 5, 64 * kMiB, 64 * kMiB + 1, 1000 * kMiB + 12345}) {
    EXPECT_GE(a.block_bytes(n), n);
    EXPECT_LE(a.block_bytes(n), n + n / 8 + 4096) << n;
    EXPECT_EQ(a.block_bytes(n) % 4096, 0u);
  }
  EXPECT_EQ(a.block_bytes(64 * kMiB), 64 * kMiB);
}

TEST(CachingAllocator, ReusedBlockReadsZeroUnlessPromisedUnwritten) {
  CachingAllocator a;
  void* p = a.allocate(2 * kMiB, Fill::Zeros);
  EXPECT_TRUE(all_bytes(p, 2 * kMiB, 0));
  std::memset(p, 0x5a, 2 * kMiB);
  a.deallocate(p, 2 * kMiB);
  // A caller that writes every byte gets the block as it was left...
  void* q = a.allocate(2 * kMiB, Fill::Unwritten);
  ASSERT_EQ(q, p);
  EXPECT_TRUE(all_bytes(q, 2 * kMiB, 0x5a));
  a.deallocate(q, 2 * kMiB);
  // ...every other caller gets zeros, as from fresh memory.
  void* r = a.allocate(2 * kMiB, Fill::Zeros);
  ASSERT_EQ(r, p);
  EXPECT_TRUE(all_bytes(r, 2 * kMiB, 0));
  a.deallocate(r, 2 * kMiB);
}

TEST(CachingAllocator, SmallAllocationsAreZeroedAndNotCached) {
  CachingAllocator a;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, kMiB - 1}) {
    void* p = a.allocate(n, Fill::Zeros);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    EXPECT_TRUE(all_bytes(p, n, 0));
    a.deallocate(p, n);
    EXPECT_EQ(a.cached_bytes(), 0u);
  }
}

TEST(CachingAllocator, SmallBlocksComeBackToTheirThreadZeroedUnlessPromised) {
  CachingAllocator a;
  void* p = a.allocate(100, Fill::Zeros);  // the 128-byte class
  std::memset(p, 0xAB, 100);
  a.deallocate(p, 100);
  void* q = a.allocate(120, Fill::Zeros);
  EXPECT_EQ(q, p) << "a freed small block is this thread's next block of its class";
  EXPECT_TRUE(all_bytes(q, 128, 0)) << "reused for a caller that did not promise to write it: zeroed";
  std::memset(q, 0xCD, 128);
  a.deallocate(q, 120);
  void* r = a.allocate(128, Fill::Unwritten);
  EXPECT_EQ(r, p);
  a.deallocate(r, 128);
  void* other = nullptr;
  std::thread([&] { other = a.allocate(100, Fill::Zeros); a.deallocate(other, 100); }).join();
  EXPECT_NE(other, p) << "another thread has a cache of its own";
  void* big = a.allocate(8192, Fill::Zeros);  // past the small classes: operator new's
  a.deallocate(big, 8192);
}

TEST(CachingAllocator, KeepsNoMoreThanItsCap) {
  CachingAllocator a({.min_cached_block = kMiB, .max_cached_bytes = 5 * kMiB});
  void* b1 = a.allocate(2 * kMiB, Fill::Zeros);
  void* b2 = a.allocate(2 * kMiB, Fill::Zeros);
  void* b3 = a.allocate(2 * kMiB, Fill::Zeros);
  void* big = a.allocate(6 * kMiB, Fill::Zeros);
  a.deallocate(b1, 2 * kMiB);
  a.deallocate(b2, 2 * kMiB);
  EXPECT_EQ(a.cached_bytes(), 4 * kMiB);
  a.deallocate(b3, 2 * kMiB);  // a third would pass the cap: an older block makes room
  EXPECT_EQ(a.cached_bytes(), 4 * kMiB);
  a.deallocate(big, 6 * kMiB);  // larger than the cap: never cached
  EXPECT_EQ(a.cached_bytes(), 4 * kMiB);
  a.release_cache();
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST(CachingAllocator, FailedAllocationReleasesTheCacheAndRetries) {
  CachingAllocator a({}, bounded_pages(6 * kMiB));
  void* p = a.allocate(4 * kMiB, Fill::Zeros);
  a.deallocate(p, 4 * kMiB);
  ASSERT_EQ(a.cached_bytes(), 4 * kMiB);
  // 4 MiB cached + 3 MiB new passes the budget: the cache goes, then the allocation succeeds.
  NewHandlerGuard guard;
  std::set_new_handler(nullptr);
  void* q = a.allocate(3 * kMiB, Fill::Zeros);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(g_maps, 3);  // the first block, the failed try, the retry
  EXPECT_EQ(a.cached_bytes(), 0u);
  EXPECT_EQ(g_mapped, 3 * kMiB);
  a.deallocate(q, 3 * kMiB);
}

TEST(CachingAllocator, FailureCallsTheNewHandlerThenThrows) {
  CachingAllocator a({}, bounded_pages(2 * kMiB));
  NewHandlerGuard guard;
  // Without a handler: std::bad_alloc, as operator new.
  std::set_new_handler(nullptr);
  EXPECT_THROW(a.allocate(4 * kMiB, Fill::Zeros), std::bad_alloc);
  // A handler that frees memory lets the allocation succeed, as it does for operator new.
  static int calls = 0;
  calls = 0;
  std::set_new_handler([] {
    ++calls;
    g_budget = 8 * kMiB;
  });
  void* p = a.allocate(4 * kMiB, Fill::Zeros);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(calls, 1);
  a.deallocate(p, 4 * kMiB);
}

TEST(CachingAllocator, IsSafeAcrossThreads) {
  CachingAllocator a({.min_cached_block = kMiB, .max_cached_bytes = 8 * kMiB});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&a, t] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t n = (1 + (i + t) % 3) * kMiB;
        auto* p = static_cast<unsigned char*>(a.allocate(n, Fill::Zeros));
        EXPECT_EQ(p[n - 1], 0);
        p[0] = p[n - 1] = static_cast<unsigned char>(t + 1);
        a.deallocate(p, n);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_LE(a.cached_bytes(), 8 * kMiB);
}

// Through Tensor: impl's own allocator zeroes what a tensor may read unwritten.
TEST(CachingAllocator, TensorsReadZeroFromAReusedBlockWhereNothingWrote) {
  const std::int64_t n = 1 << 20;  // 4 MiB of floats: a cached block size
  {
    Tensor t = Tensor::allocate(Layout::dense({n}), ScalarType::Float32);
    std::fill(t.data<float>(), t.data<float>() + n, 7.0f);
  }
  Tensor zeroed = Tensor::allocate(Layout::dense({n}), ScalarType::Float32);
  EXPECT_TRUE(all_bytes(zeroed.data<float>(), n * sizeof(float), 0));
  std::fill(zeroed.data<float>(), zeroed.data<float>() + n, 7.0f);
  zeroed = Tensor();
  // A layout with holes: allocate_uninitialized zeroes it too, since no kernel writes the holes.
  Tensor gapped = Tensor::allocate_uninitialized(Layout{{n / 2}, {2}, 0}, ScalarType::Float32);
  EXPECT_TRUE(all_bytes(gapped.storage().data(), gapped.storage().nbytes(), 0));
}

TEST(CachingAllocator, CloneOfALargeTensorIsExactOverAReusedBlock) {
  const std::int64_t n = 1 << 20;
  Tensor x = from_values(std::vector<double>(static_cast<std::size_t>(n), 3.0), ScalarType::Float32);
  for (int i = 0; i < 3; ++i) {
    Tensor y = clone(x, MemoryFormat::Contiguous);
    EXPECT_NE(y.storage().key(), x.storage().key());
    const float* v = y.data<float>();
    EXPECT_TRUE(std::all_of(v, v + n, [](float f) { return f == 3.0f; }));
  }
}

}  // namespace
}  // namespace parity::impl
