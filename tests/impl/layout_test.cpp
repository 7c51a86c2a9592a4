// Unit tests of impl's Layout: PyTorch's contiguity predicates and view geometry, size-1 dims included.
#include <gtest/gtest.h>

#include "impl/error.h"
#include "impl/layout.h"

namespace parity::impl {
namespace {

TEST(ImplLayout, ContiguousStridesTreatEmptyDimsAsOne) {
  EXPECT_EQ(strides_for({2, 0, 3}, MemoryFormat::Contiguous), (Dims{3, 3, 1}));
  EXPECT_EQ(strides_for({2, 3, 4, 5}, MemoryFormat::ChannelsLast), (Dims{60, 1, 15, 3}));
  EXPECT_EQ(strides_for({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d), (Dims{360, 1, 90, 18, 3}));
  EXPECT_THROW(strides_for({2, 3}, MemoryFormat::ChannelsLast), Error);
}

TEST(ImplLayout, ContiguityIgnoresSize1Dims) {
  Layout l{{2, 1, 3}, {3, 99, 1}, 0};
  EXPECT_TRUE(l.is_contiguous());
  EXPECT_TRUE(l.is_non_overlapping_and_dense());
  Layout t{{3, 2}, {1, 3}, 0};  // transposed
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(t.is_non_overlapping_and_dense());
  Layout expanded{{3, 2}, {0, 1}, 0};
  EXPECT_FALSE(expanded.is_non_overlapping_and_dense());
}

TEST(ImplLayout, ChannelsLastAmbiguityFallsBackToContiguous) {
  // N111 with identical strides is reported contiguous, not channels_last (PyTorch's tie-break).
  Layout n111{{4, 1, 1, 1}, {1, 1, 1, 1}, 0};
  EXPECT_EQ(n111.suggest_memory_format(), MemoryFormat::Contiguous);
  Layout cl = Layout::dense({2, 3, 4, 5}, MemoryFormat::ChannelsLast);
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(cl.is_contiguous());
  EXPECT_EQ(cl.suggest_memory_format(), MemoryFormat::ChannelsLast);
}

TEST(ImplLayout, InferDenseStridesKeepsDimensionOrder) {
  EXPECT_EQ(infer_dense_strides({2, 3, 4}, {1, 4, 24}), (Dims{1, 2, 6}));
  EXPECT_EQ(infer_dense_strides({4, 2, 1, 3}, {180, 1, 4, 24}), (Dims{6, 1, 2, 2}));
}

TEST(ImplLayout, ViewFollowsComputeStride) {
  const TorchVersion release{1, 13};
  Layout c = Layout::dense({2, 3, 4});
  EXPECT_EQ(geometry::view(c, {6, 4}, release).strides, (Dims{4, 1}));
  EXPECT_EQ(geometry::view(c, {-1}, release).sizes, (Dims{24}));
  Layout t = geometry::transpose(c, 0, 2);  // [4,3,2] @ [1,4,12]
  EXPECT_THROW(geometry::view(t, {24}, release), Error);
  try {
    geometry::view(c, {5, 5}, release);
    FAIL() << "view to a wrong numel must raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Shape);
    EXPECT_EQ(e.error_class(), ErrorClass::RuntimeError);  // 1.13's InferSize.h throws a plain std::runtime_error
  }
}

TEST(ImplLayout, SliceSelectNarrowExpandGeometry) {
  Layout c = Layout::dense({4, 5});
  Layout s = geometry::slice(c, 1, 1, 100, 2);
  EXPECT_EQ(s.sizes, (Dims{4, 2}));
  EXPECT_EQ(s.strides, (Dims{5, 2}));
  EXPECT_EQ(s.offset, 1);
  Layout sel = geometry::select(c, 0, -1);
  EXPECT_EQ(sel.offset, 15);
  EXPECT_EQ(sel.sizes, (Dims{5}));
  for (TorchVersion release : {TorchVersion{1, 13}, TorchVersion{2, 15}})
    EXPECT_THROW(geometry::narrow(c, 0, 2, 3, release), Error) << release.str();
  Layout e = geometry::expand(Layout::dense({3, 1}), {2, 3, 4}, "CPUFloatType");
  EXPECT_EQ(e.strides, (Dims{0, 1, 0}));  // new and broadcast dims read one element
  Layout scalar = geometry::expand(Layout{}, {1, 1}, "CPUFloatType");
  EXPECT_EQ(scalar.strides, (Dims{0, 0}));  // every dim of a 0-d tensor's expansion has stride 0
  Layout u = geometry::unsqueeze(c, 2);
  EXPECT_EQ(u.strides, (Dims{5, 1, 1}));
}

TEST(ImplLayout, AsStridedChecksStorageBounds) {
  for (TorchVersion release : {TorchVersion{1, 13}, TorchVersion{2, 15}}) {
    EXPECT_NO_THROW(geometry::as_strided({2, 2}, {2, 1}, 2, 6, 4, release)) << release.str();
    try {
      geometry::as_strided({2, 2}, {2, 1}, 3, 6, 4, release);
      ADD_FAILURE() << release.str() << ": as_strided past the storage must raise";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::StorageBounds) << release.str();
    }
  }
}

}  // namespace
}  // namespace parity::impl
