// program/program.h's overlap questions: whether a layout's own elements share memory, and whether two layouts
// over one storage do. The run loop's taint rests on the second (judge/run.cpp): a wrong "no" would compare an
// order-dependent write, a wrong "yes" would hide a defined one.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "program/program.h"
#include "program/splitmix.h"

namespace parity::program {
namespace {

using Dims = std::vector<std::int64_t>;

std::set<std::int64_t> elements(const Dims& sizes, const Dims& strides, std::int64_t offset) {
  std::set<std::int64_t> out;
  std::int64_t total = 1;
  for (auto s : sizes) total *= s;
  for (std::int64_t k = 0; k < total; ++k) {
    std::int64_t rest = k, addr = offset;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      addr += (rest % sizes[d]) * strides[d];
      rest /= sizes[d];
    }
    out.insert(addr);
  }
  return out;
}

TEST(MemoryOverlap, NarrowHalvesAreDisjointAndSharedColumnsAreNot) {
  EXPECT_FALSE(layouts_share_memory({2}, {1}, 0, {2}, {1}, 2));
  EXPECT_TRUE(layouts_share_memory({3}, {1}, 0, {3}, {1}, 1));
  // Columns 0..1 and 1..2 of a 2x3 matrix share column 1; columns 0 and 2 interleave in range but not in memory.
  EXPECT_TRUE(layouts_share_memory({2, 2}, {3, 1}, 0, {2, 2}, {3, 1}, 1));
  EXPECT_FALSE(layouts_share_memory({2, 1}, {3, 1}, 0, {2, 1}, {3, 1}, 2));
  // A transposed view reaches the same elements; an empty one reaches none.
  EXPECT_TRUE(layouts_share_memory({2, 3}, {3, 1}, 0, {3, 2}, {1, 3}, 0));
  EXPECT_FALSE(layouts_share_memory({0, 3}, {3, 1}, 0, {2, 3}, {3, 1}, 0));
}

// Against the definition, on random layouts with gaps, zero strides and interleaving offsets.
TEST(MemoryOverlap, AgreesWithEnumeratingBothLayouts) {
  std::uint64_t state = 2029;
  auto draw = [&](std::int64_t n) {
    state = splitmix64(state);
    return static_cast<std::int64_t>(state % static_cast<std::uint64_t>(n));
  };
  int shared = 0;
  for (int i = 0; i < 2000; ++i) {
    Dims sa, ta, sb, tb;
    for (Dims* s : {&sa, &sb}) s->resize(static_cast<std::size_t>(1 + draw(3)));
    for (auto* p : {&sa, &sb})
      for (auto& v : *p) v = draw(4);
    for (auto [s, t] : {std::pair{&sa, &ta}, std::pair{&sb, &tb}})
      for (std::size_t d = 0; d < s->size(); ++d) t->push_back(draw(7));
    const std::int64_t oa = draw(6), ob = draw(6);
    std::set<std::int64_t> a = elements(sa, ta, oa), b = elements(sb, tb, ob);
    bool expected = false;
    for (auto e : a) expected = expected || b.count(e) > 0;
    shared += expected;
    ASSERT_EQ(layouts_share_memory(sa, ta, oa, sb, tb, ob), expected) << "case " << i;
  }
  EXPECT_GT(shared, 200);
  EXPECT_LT(shared, 1800);
}

}  // namespace
}  // namespace parity::program
