// impl::Dims against std::vector<int64_t>, the type it stands in for: the same elements after the same operations,
// in place and past its inline capacity, and across copies, moves and conversions.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "impl/dims.h"

namespace parity::impl {
namespace {

using Vec = std::vector<std::int64_t>;

void expect_same(const Dims& d, const Vec& v) {
  ASSERT_EQ(d.size(), v.size());
  EXPECT_EQ(Vec(d), v);
  EXPECT_TRUE(d == v);
  EXPECT_EQ(d.empty(), v.empty());
  if (!v.empty()) {
    EXPECT_EQ(d.front(), v.front());
    EXPECT_EQ(d.back(), v.back());
  }
}

TEST(ImplDims, RandomOperationsMatchStdVector) {
  std::mt19937 rng(3);
  Dims d;
  Vec v;
  for (int step = 0; step < 20000; ++step) {
    const std::int64_t x = static_cast<std::int64_t>(rng() % 1000) - 500;
    const std::size_t pos = v.empty() ? 0 : rng() % (v.size() + 1);
    switch (rng() % 9) {
      case 0: d.push_back(x); v.push_back(x); break;
      case 1: if (!v.empty()) { d.pop_back(); v.pop_back(); } break;
      case 2: d.insert(d.begin() + pos, x); v.insert(v.begin() + static_cast<std::ptrdiff_t>(pos), x); break;
      case 3:
        if (pos < v.size()) {
          d.erase(d.begin() + pos);
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(pos));
        }
        break;
      case 4: { const std::size_t n = rng() % 12; d.resize(n, x); v.resize(n, x); break; }
      case 5: {  // a range of itself, inserted into itself
        const Vec copy = v;
        d.insert(d.begin() + pos, d.begin(), d.end());
        v.insert(v.begin() + static_cast<std::ptrdiff_t>(pos), copy.begin(), copy.end());
        if (v.size() > 40) { d.clear(); v.clear(); }
        break;
      }
      case 6: { Dims moved(std::move(d)); EXPECT_TRUE(d.empty()); d = std::move(moved); break; }
      case 7: { const Dims copy = d; d = copy; break; }
      case 8: if (!v.empty()) { d[pos % v.size()] = x; v[pos % v.size()] = x; } break;
    }
    expect_same(d, v);
    if (HasFatalFailure()) return;
  }
}

TEST(ImplDims, ConstructsAndComparesAsAVector) {
  expect_same(Dims{2, 3, 4}, Vec{2, 3, 4});
  expect_same(Dims(3), Vec(3));
  expect_same(Dims(2, 7), Vec(2, 7));
  const Vec long_one{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Dims from_vec = long_one;  // past the inline capacity
  expect_same(from_vec, long_one);
  EXPECT_GT(from_vec.capacity(), Dims::kInline);
  Dims moved = Dims(long_one);
  expect_same(moved, long_one);
  EXPECT_TRUE((Dims{1, 2} < Dims{1, 3}));
  EXPECT_FALSE((Dims{1, 2} == Dims{1, 2, 0}));
  EXPECT_TRUE((Dims{1, 2} != Vec{1, 2, 0}));
}

}  // namespace
}  // namespace parity::impl
