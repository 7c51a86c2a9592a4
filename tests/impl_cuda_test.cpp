// impl's CUDA storage, transfers and device copies. Needs a CUDA build and a device; otherwise each test says why it skips.
#include <gtest/gtest.h>

#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/ops.h"

namespace parity::impl {
namespace {

// GTEST_SKIP must run in the test body itself to end the test.
#ifdef PARITY_WITH_CUDA
#define PARITY_REQUIRE_CUDA_DEVICE() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine: CUDA tests skipped"
#else
#define PARITY_REQUIRE_CUDA_DEVICE() \
  GTEST_SKIP() << "built without CUDA (no nvcc at configure time): CUDA tests skipped"
#endif

TEST(ImplCuda, WithoutDeviceAllocationFailsCleanly) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; this test covers machines without one";
  EXPECT_THROW(empty({2}, ScalarType::Float32, MemoryFormat::Contiguous, Device{DeviceType::CUDA, 0}), Error);
}

TEST(ImplCuda, DeviceCopyTransposes) {
  PARITY_REQUIRE_CUDA_DEVICE();
  Tensor host = from_values({0, 1, 2, 3, 4, 5}, ScalarType::Float32);
  Tensor dev = cuda::to_device(view(host, {2, 3}));
  Tensor t = Tensor::over(dev.storage(), geometry::transpose(dev.layout(), 0, 1), dev.dtype(), dev.version_counter());
  Tensor out = empty({3, 2}, ScalarType::Float32, MemoryFormat::Contiguous, Device{DeviceType::CUDA, 0});
  copy_(out, t);
  EXPECT_EQ(cuda::to_host(out).to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(ImplCuda, DeviceCopyOfEveryDtypeRoundTrips) {
  PARITY_REQUIRE_CUDA_DEVICE();
  for (ScalarType t : {ScalarType::Bool, ScalarType::Int32, ScalarType::Int64, ScalarType::Float32, ScalarType::Float64}) {
    Tensor host = from_values({1, 0, 1, 1}, t);
    Tensor dev = cuda::to_device(host);
    Tensor out = empty({4}, t, MemoryFormat::Contiguous, Device{DeviceType::CUDA, 0});
    copy_(out, dev);
    EXPECT_EQ(cuda::to_host(out).to_vector(), host.to_vector());
  }
}

}  // namespace
}  // namespace parity::impl
