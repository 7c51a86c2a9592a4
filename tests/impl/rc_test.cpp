// impl::Rc, the single-thread shared pointer of storages, version counters, tensors and nodes: what it owns lives
// exactly as long as its last handle, whatever the copies, moves, assignments and conversions between handles, and
// a weak handle sees it until then.
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
    Rc<Tracked> a = make_rc<Tracked>(7);
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
  Rc<Tracked> a = make_rc<Tracked>(1);
  Rc<Tracked> b = make_rc<Tracked>(2);
  EXPECT_FALSE(a == b);
  a = b;
  EXPECT_EQ(Tracked::alive, 1);
  EXPECT_EQ(a->value, 2);
  EXPECT_EQ(b.use_count(), 2);
  const Rc<Tracked>& same = a;
  a = same;
  EXPECT_EQ(a.use_count(), 2);
  EXPECT_EQ(Tracked::alive, 1);
  EXPECT_EQ(b->value, 2);
}

struct Base {
  virtual ~Base() = default;
  virtual int kind() const { return 0; }
};
struct Derived : Base, EnableRcFromThis<Derived> {
  explicit Derived(int* destroyed) : destroyed(destroyed) {}
  ~Derived() override { ++*destroyed; }
  int kind() const override { return 1; }
  int* destroyed;
};

// What autograd's nodes need: a base handle destroys the derived object, a weak handle locks while a strong one
// lives and not after, and an object hands out handles to itself that share its count.
TEST(ImplRc, PolymorphicWeakAndFromThis) {
  int destroyed = 0;
  WeakRc<Base> weak;
  {
    Rc<Base> base = make_rc<Derived>(&destroyed);
    EXPECT_EQ(base->kind(), 1);
    weak = base;
    EXPECT_EQ(weak.lock().get(), base.get());
    Rc<Derived> self = static_cast<Derived&>(*base).shared_from_this();
    EXPECT_EQ(base.use_count(), 2);
    EXPECT_FALSE(weak.expired());
  }
  EXPECT_EQ(destroyed, 1);
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(weak.lock(), nullptr);
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
