// impl's BlockPool (impl/block_pool.h) as the CUDA device's allocator configures it (512-byte steps, a bound on
// cached bytes), over counting pages: the CPU caching allocator's tests cover it as the CPU configures it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <set>

#include "impl/block_pool.h"

namespace parity::impl {
namespace {

std::set<void*> g_live;
int g_maps = 0, g_unmaps = 0;
std::size_t g_fail_above = 0;  // when nonzero, map fails for requests above it

void* counting_map(std::size_t bytes) {
  if (g_fail_above != 0 && bytes > g_fail_above) return nullptr;
  ++g_maps;
  void* p = std::malloc(bytes);
  g_live.insert(p);
  return p;
}
void counting_unmap(void* p, std::size_t) {
  ++g_unmaps;
  g_live.erase(p);
  std::free(p);
}

class BlockPoolTest : public ::testing::Test {
 protected:
  void SetUp() override { g_maps = g_unmaps = 0, g_fail_above = 0; }
  void TearDown() override { EXPECT_TRUE(g_live.empty()) << g_live.size() << " blocks never unmapped"; }
  static BlockPool::Options device_like(std::size_t cap) { return {.min_step = 512, .max_cached_bytes = cap}; }
};

TEST_F(BlockPoolTest, SmallRequestsShareA512ByteClass) {
  BlockPool pool(device_like(1 << 20), {&counting_map, &counting_unmap});
  EXPECT_EQ(pool.block_bytes(0), 512u);
  EXPECT_EQ(pool.block_bytes(4), 512u);
  EXPECT_EQ(pool.block_bytes(513), 1024u);
  for (std::size_t n : {std::size_t{1000}, std::size_t{70000}, std::size_t{3} << 20}) {
    EXPECT_GE(pool.block_bytes(n), n);
    EXPECT_LE(pool.block_bytes(n), n + n / 8 + 512) << n;
  }
}

TEST_F(BlockPoolTest, AGivenBackBlockServesItsClassWithoutAMap) {
  BlockPool pool(device_like(1 << 20), {&counting_map, &counting_unmap});
  bool reused = true;
  void* a = pool.take(100, reused);
  EXPECT_FALSE(reused);
  pool.give(a, 100);
  EXPECT_EQ(pool.cached_bytes(), 512u);
  void* b = pool.take(300, reused);  // the same 512-byte class
  EXPECT_TRUE(reused);
  EXPECT_EQ(b, a);
  void* c = pool.take(600, reused);  // another class: a fresh block
  EXPECT_FALSE(reused);
  EXPECT_EQ(g_maps, 2);
  pool.give(b, 300);
  pool.give(c, 600);
  pool.release();
  EXPECT_EQ(g_unmaps, 2);
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST_F(BlockPoolTest, KeepsNoMoreThanItsBoundAndUnmapsOversizedBlocks) {
  BlockPool pool(device_like(2048), {&counting_map, &counting_unmap});
  bool reused = false;
  void* big = pool.take(4096, reused);
  pool.give(big, 4096);  // over the bound by itself: straight back
  EXPECT_EQ(g_unmaps, 1);
  void* blocks[5];
  for (void*& p : blocks) p = pool.take(512, reused);
  for (void* p : blocks) pool.give(p, 512);
  EXPECT_EQ(pool.cached_bytes(), 2048u);
  EXPECT_EQ(g_unmaps, 2);
}

TEST_F(BlockPoolTest, AFailedMapReturnsTheCacheAndTriesOnce) {
  BlockPool pool(device_like(1 << 20), {&counting_map, &counting_unmap});
  bool reused = false;
  void* a = pool.take(8192, reused);
  pool.give(a, 8192);
  g_fail_above = 4096;
  EXPECT_EQ(pool.take(16384, reused), nullptr);  // still fails after the cache is gone
  EXPECT_EQ(pool.cached_bytes(), 0u);
  EXPECT_EQ(g_unmaps, 1);
  g_fail_above = 0;
  void* b = pool.take(16384, reused);
  EXPECT_NE(b, nullptr);
  pool.give(b, 16384);
}

}  // namespace
}  // namespace parity::impl
