// impl::Rc, the single-thread shared handle of storages and version counters: what it owns lives exactly as long
// as its last handle, whatever the copies, moves and assignments between handles.
#include <gtest/gtest.h>

#include <utility>

#include "impl/rc.h"
#include "impl/storage.h"
#include "impl/tensor.h"
#include "impl/version_counter.h"

namespace parity::impl {
namespace {

// Counts its live instances.
struct Tracked {
  static inline int alive = 0;
  int value;
  explicit Tracked(int v) : value(v) { ++alive; }
  Tracked(Tracked&& o) noexcept : value(o.value) { ++alive; }
  ~Tracked() { --alive; }
};

TEST(ImplRc, TheValueLivesAsLongAsItsLastHandle) {
  Tracked::alive = 0;
  {
    Rc<Tracked> a = Rc<Tracked>::make(7);
    EXPECT_EQ(Tracked::alive, 1);
    EXPECT_EQ(a->value, 7);
    EXPECT_EQ(a.use_count(), 1);
    Rc<Tracked> b = a;
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_TRUE(a == b);
    EXPECT_EQ(b.get(), a.get());
    {
      Rc<Tracked> c = std::move(b);
      EXPECT_FALSE(b);
      EXPECT_EQ(b.use_count(), 0);
      EXPECT_EQ(c.use_count(), 2);
      a = Rc<Tracked>();  // a lets go; c still holds it
      EXPECT_EQ(Tracked::alive, 1);
      EXPECT_EQ(c.use_count(), 1);
    }
    EXPECT_EQ(Tracked::alive, 0);
  }
  EXPECT_EQ(Tracked::alive, 0);
}

TEST(ImplRc, AssignmentReleasesTheOldValueAndSelfAssignmentKeepsIt) {
  Tracked::alive = 0;
  Rc<Tracked> a = Rc<Tracked>::make(1);
  Rc<Tracked> b = Rc<Tracked>::make(2);
  EXPECT_FALSE(a == b);
  a = b;
  EXPECT_EQ(Tracked::alive, 1);
  EXPECT_EQ(a->value, 2);
  EXPECT_EQ(b.use_count(), 2);
  const Rc<Tracked>& same = a;
  a = same;
  EXPECT_EQ(a.use_count(), 2);
  a = std::move(a);  // NOLINT: self-move must leave the value where it was
  EXPECT_EQ(Tracked::alive, 1);
  EXPECT_EQ(b->value, 2);
}

// What the handles are for: tensors over one storage count it, and a version counter bumped through one view is
// the one every other view reads.
TEST(ImplRc, StorageAndVersionAreSharedByTheTensorsOverThem) {
  Tensor t = Tensor::allocate(Layout::dense({2, 3}), ScalarType::Float32);
  EXPECT_EQ(t.storage().use_count(), 1);
  {
    Tensor u = t.alias();
    EXPECT_EQ(t.storage().use_count(), 2);
    EXPECT_EQ(u.storage().key(), t.storage().key());
    EXPECT_TRUE(u.version_counter().shares_with(t.version_counter()));
    u.bump_version();
    EXPECT_EQ(t.version(), 1u);
    Tensor fresh = Tensor::over(t.storage(), t.layout(), t.dtype(), VersionCounter());
    EXPECT_FALSE(fresh.version_counter().shares_with(t.version_counter()));
    EXPECT_EQ(fresh.version(), 0u);
    EXPECT_EQ(t.storage().use_count(), 3);
  }
  EXPECT_EQ(t.storage().use_count(), 1);
}

}  // namespace
}  // namespace parity::impl
