// impl's CUDA: storage, transfers, device copies and the device rules of ops, on each kind of cuda memory: the
// device's (needs a CUDA build and a device; otherwise those tests say why they skip) and host-backed memory
// (impl/cuda/cuda_runtime.h), which runs everywhere, so that impl's CUDA logic runs in CI without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "impl/autograd/meta.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/kernels/reduce.h"
#include "impl/ops.h"
#include "impl/torch_version.h"

namespace parity::impl {
namespace {

const Device kCuda{DeviceType::CUDA, 0};

enum class Memory { Device, HostBacked };

class ImplCuda : public ::testing::TestWithParam<Memory> {
 protected:
  void SetUp() override {
    if (GetParam() == Memory::HostBacked) {
      scope_ = std::make_unique<cuda::HostBackedScope>();
      return;
    }
#ifdef PARITY_WITH_CUDA
    if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device on this machine: device memory tests skipped";
#else
    GTEST_SKIP() << "built without CUDA (no nvcc at configure time): device memory tests skipped";
#endif
  }
  std::unique_ptr<cuda::HostBackedScope> scope_;

 private:
  TargetTorchVersionGuard release_{TorchVersion{1, 13}};  // the release these tests expect LibTorch's behaviour of
};

std::string raised(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(nothing raised)";
}

TEST_P(ImplCuda, MemoryIsOfTheKindAskedFor) {
  Tensor t = empty({2}, ScalarType::Float32, MemoryFormat::Contiguous, kCuda);
  EXPECT_EQ(t.device(), kCuda);
  EXPECT_EQ(t.storage().host_addressable(), GetParam() == Memory::HostBacked);
}

TEST_P(ImplCuda, DeviceCopyTransposes) {
  Tensor host = from_values({0, 1, 2, 3, 4, 5}, ScalarType::Float32);
  Tensor dev = cuda::to_device(view(host, {2, 3}));
  Tensor t = Tensor::over(dev.storage(), geometry::transpose(dev.layout(), 0, 1), dev.dtype(), dev.version_counter());
  Tensor out = empty({3, 2}, ScalarType::Float32, MemoryFormat::Contiguous, kCuda);
  copy_(out, t);
  EXPECT_EQ(cuda::to_host(out).to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST_P(ImplCuda, DeviceCopyOfEveryDtypeRoundTrips) {
  for (ScalarType t : {ScalarType::Bool, ScalarType::Int32, ScalarType::Int64, ScalarType::Float32, ScalarType::Float64}) {
    Tensor host = from_values({1, 0, 1, 1}, t);
    Tensor dev = cuda::to_device(host);
    Tensor out = empty({4}, t, MemoryFormat::Contiguous, kCuda);
    copy_(out, dev);
    EXPECT_EQ(cuda::to_host(out).to_vector(), host.to_vector());
  }
}

TEST_P(ImplCuda, ToTheDeviceAliasesOnlyWhenAlreadyThere) {
  Tensor host = from_values({1, 2, 3}, ScalarType::Float32);
  Tensor dev = to(host, kCuda);
  EXPECT_EQ(dev.device(), kCuda);
  EXPECT_NE(dev.storage().key(), host.storage().key());
  EXPECT_EQ(to(dev, kCuda).storage().key(), dev.storage().key());
  EXPECT_NE(to(dev, kCuda, /*copy=*/true).storage().key(), dev.storage().key());
  EXPECT_EQ(to(dev, Device{}).to_vector(), host.to_vector());
}

TEST_P(ImplCuda, OpsFollowTheDeviceRules) {
  Tensor a = to(from_values({1, 2, 3, 4}, ScalarType::Float32), kCuda);
  Tensor c = from_values({10, 20, 30, 40}, ScalarType::Float32);
  EXPECT_EQ(raised([&] { add(a, c); }),
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
  // A CPU 0-dim tensor is a scalar to a cuda op, and the result stays on cuda.
  Tensor s = add(a, view(from_values({5}, ScalarType::Float32), {}));
  EXPECT_EQ(s.device(), kCuda);
  EXPECT_EQ(s.to_vector(), (std::vector<double>{6, 7, 8, 9}));
  // cuBLAS has no integer products; the CPU's mm has.
  Tensor i = to(from_values({1, 2, 3, 4}, ScalarType::Int64), kCuda);
  EXPECT_EQ(raised([&] { mm(view(i, {2, 2}), view(i, {2, 2})); }), "\"addmm_cuda\" not implemented for 'Long'");
  EXPECT_EQ(mm(view(to(i, Device{}), {2, 2}), view(to(i, Device{}), {2, 2})).to_vector(),
            (std::vector<double>{7, 10, 15, 22}));
  Tensor m = view(a, {2, 2});
  EXPECT_EQ(mm(m, m).to_vector(), (std::vector<double>{7, 10, 15, 22}));
  EXPECT_EQ(mm(m, m).device(), kCuda);
}

// The device order of a sum (kernels::DeviceSumPlan), written out plainly: lanes, then a tree per block of lanes,
// then a tree over the blocks. `x` holds one output's elements in row-major order.
float sum_in_stated_device_order(const std::vector<double>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  float acc = 0;
  if (n <= kernels::kDeviceSumInOrderMax) {
    for (double v : x) acc += static_cast<float>(v);
    return acc;
  }
  const std::int64_t lanes_per_block = kernels::kDeviceSumBlockLanes;
  const std::int64_t blocks = std::clamp<std::int64_t>(n / (lanes_per_block * kernels::kDeviceSumLaneElements), 1,
                                                       kernels::kDeviceSumMaxBlocks);
  std::vector<float> lane(blocks * lanes_per_block, 0.0f);
  for (std::int64_t k = 0; k < n; ++k) lane[k % lane.size()] += static_cast<float>(x[k]);
  auto tree = [](std::vector<float> p) {  // pairs i and i + half, halving from the power of two at or above
    std::size_t width = 1;
    while (width < p.size()) width *= 2;
    for (std::size_t half = width / 2; half >= 1; half /= 2)
      for (std::size_t i = 0; i < half && i + half < p.size(); ++i) p[i] += p[i + half];
    return p[0];
  };
  std::vector<float> block_sums;
  for (std::int64_t b = 0; b < blocks; ++b)
    block_sums.push_back(tree(std::vector<float>(lane.begin() + b * lanes_per_block,
                                                 lane.begin() + (b + 1) * lanes_per_block)));
  return tree(block_sums);
}

// Values whose float sum depends on the order.
std::vector<double> order_sensitive(std::int64_t n) {
  std::vector<double> v;
  for (std::int64_t k = 0; k < n; ++k) v.push_back(k % 3 == 0 ? 1e7 + k : 0.37 * (k % 11) - 1.3);
  return v;
}

TEST_P(ImplCuda, ASumTakesTheDevicesOrder) {
  // One thread in order, one block of lanes, several blocks (with a block count that is not a power of two).
  for (std::int64_t n : {std::int64_t{32}, std::int64_t{4096}, std::int64_t{7 * 4096 + 5}}) {
    const std::vector<double> v = order_sensitive(n);
    Tensor s = sum(to(from_values(v, ScalarType::Float32), kCuda));
    EXPECT_EQ(s.device(), kCuda);
    EXPECT_EQ(static_cast<float>(s.to_vector()[0]), sum_in_stated_device_order(v)) << n;
  }
}

TEST_P(ImplCuda, EachOutputOfASumOverAStridedDimTakesTheDevicesOrder) {
  // Three outputs, each summing a column of a (n, 3) tensor: elements 3 apart, in row-major order of the column.
  const std::int64_t n = 3 * 4096 + 7;
  const std::vector<double> v = order_sensitive(3 * n);
  Tensor s = sum(view(to(from_values(v, ScalarType::Float32), kCuda), {n, 3}), {0}, /*keepdim=*/false);
  const std::vector<double> got = s.to_vector();
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t c = 0; c < 3; ++c) {
    std::vector<double> column;
    for (std::int64_t r = 0; r < n; ++r) column.push_back(v[r * 3 + c]);
    EXPECT_EQ(static_cast<float>(got[c]), sum_in_stated_device_order(column)) << c;
  }
}

TEST_P(ImplCuda, AdvancedIndexingWritesBack) {
  Tensor a = to(from_values({0, 1, 2, 3, 4}, ScalarType::Float32), kCuda);
  Tensor idx = to(from_values({4, 0}, ScalarType::Int64), kCuda);
  EXPECT_EQ(index(a, idx).to_vector(), (std::vector<double>{4, 0}));
  index_put_(a, idx, to(from_values({7, 9}, ScalarType::Float32), kCuda), /*accumulate=*/false);
  EXPECT_EQ(a.to_vector(), (std::vector<double>{9, 1, 2, 3, 7}));
  EXPECT_EQ(a.device(), kCuda);
}

// Each of these is what LibTorch-CUDA 2.11 answered on an H200 where impl's cuda did not (issue 30's device run).
TEST_P(ImplCuda, ClampOfABoolNamesTheOneScalarKernelWhicheverBounds) {
  Tensor b = to(from_values({1, 0}, ScalarType::Bool), kCuda);
  const std::string refused = "\"clamp_scalar_cuda\" not implemented for 'Bool'";
  EXPECT_EQ(raised([&] { clamp_(b, std::nullopt, Scalar{Scalar::Kind::Bool, 1}); }), refused);
  EXPECT_EQ(raised([&] { clamp_(b, Scalar{Scalar::Kind::Bool, 0}, std::nullopt); }), refused);
  EXPECT_EQ(raised([&] { clamp_(b, Scalar{Scalar::Kind::Bool, 0}, Scalar{Scalar::Kind::Bool, 1}); }), refused);
}

TEST_P(ImplCuda, PowOfAHalfTakesTheSpecialExponentsAsFloatsDo) {
  // -0.5 is rsqrt on cuda, whose root of -0 is -0: LibTorch-CUDA gives -inf where the CPU's std::pow gives +inf.
  Tensor z = from_values({-0.0, 4}, ScalarType::Float16);
  EXPECT_EQ(pow(to(z, kCuda), Scalar::of(-0.5)).to_vector(), (std::vector<double>{-INFINITY, 0.5}));
  EXPECT_EQ(pow(z, Scalar::of(-0.5)).to_vector(), (std::vector<double>{INFINITY, 0.5}));
}

TEST_P(ImplCuda, TanhsHalfGradientRoundsEachOperationInHalf) {
  // y = tanh(-2.5) = -0.98681640625 in half; 1 - y * y cancels, so rounding y * y to half (0.973633 for
  // 0.973805) moves the gradient by 8 ulps: LibTorch-CUDA 2.11 gave 0.072509765625 where computing in float
  // (the CPU's kernel) gives 0.072021484375.
  Tensor x = requires_grad_(to(from_values({-2.5}, ScalarType::Float16), kCuda), true);
  backward(tanh(x), false, to(from_values({2.75}, ScalarType::Float32), kCuda));
  EXPECT_EQ(autograd::grad(x).to_vector(), (std::vector<double>{0.072509765625}));
}

TEST_P(ImplCuda, TheOutputsDeviceThenItsCastAreCheckedBeforeTheInputsDevices) {
  const std::string two_devices =
      "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!";
  // The output is on the common device, but cannot hold a float result: that comes before the CPU input.
  Tensor ints = to(from_values({3, 3}, ScalarType::Int64), kCuda);
  Tensor floats = from_values({0.5, 2}, ScalarType::Float32);
  EXPECT_EQ(raised([&] { div_(ints, floats); }), "result type Float can't be cast to the desired output type Long");
  Tensor out = to(from_values({0}, ScalarType::Int32), kCuda);
  EXPECT_EQ(raised([&] { div_out(out, floats, floats); }),
            "result type Float can't be cast to the desired output type Int");
  // The output is on the CPU, the common device cuda: its device comes before its cast.
  Tensor bools = from_values({1, 0}, ScalarType::Bool);
  Tensor dev = to(floats, kCuda);
  EXPECT_EQ(raised([&] { addcmul_(bools, dev, dev, Scalar{Scalar::Kind::Bool, 1}); }), two_devices);
  // Both fine: the inputs' devices still count.
  EXPECT_EQ(raised([&] { div_(to(floats, kCuda), from_values({1, 2}, ScalarType::Float32)); }), two_devices);
}

TEST_P(ImplCuda, AccumulatingIndexPutExpandsTheValuesToTheResultsShape) {
  Tensor self = to(from_values({5}, ScalarType::Float32), kCuda);
  self = view(self, {1, 1, 1});
  Tensor none = to(view(from_values({0}, ScalarType::Bool), {1, 1, 1}), kCuda);
  Tensor values = to(view(from_values({2}, ScalarType::Float32), {1, 1, 1}), kCuda);
  EXPECT_EQ(raised([&] { index_put_(self, none, values, /*accumulate=*/true); }),
            "shape mismatch: value tensor of shape [1, 1, 1] cannot be broadcast to indexing result of shape [0]");
  TargetTorchVersionGuard since{TorchVersion{2, 11}};
  EXPECT_EQ(raised([&] { index_put_(self, none, values, /*accumulate=*/true); }),
            "expand(CUDAFloatType{[1, 1, 1]}, size=[0]): the number of sizes provided (1) must be greater or equal "
            "to the number of dimensions in the tensor (3)");
  EXPECT_EQ(raised([&] { index_put_(self, none, values, /*accumulate=*/false); }),
            "shape mismatch: value tensor of shape [1, 1, 1] cannot be broadcast to indexing result of shape [0]")
      << "without accumulate, TensorIterator's check";
}

TEST_P(ImplCuda, AccumulatingIndexPutRefusesASelfWhoseElementsOverlap) {
  // The sort kernel writes a contiguous copy of a self that is not contiguous, then copy_s it back: copy_ refuses
  // an expanded self, which stays as it was. With nothing indexed there is nothing to copy back.
  Tensor base = to(view(from_values({1, 2, 3, 4}, ScalarType::Int64), {1, 4}), kCuda);
  Tensor self = expand(base, {2, 4});
  Tensor rows = arange(2, ScalarType::Int64, kCuda);
  Tensor values = to(view(from_values({1, 1, 1, 1, 1, 1, 1, 1}, ScalarType::Int64), {2, 4}), kCuda);
  EXPECT_EQ(raised([&] { index_put_(self, rows, values, /*accumulate=*/true); }),
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.");
  EXPECT_EQ(base.to_vector(), (std::vector<double>{1, 2, 3, 4}));
  Tensor no_rows = to(from_values({}, ScalarType::Int64), kCuda);
  EXPECT_EQ(raised([&] { index_put_(self, no_rows, select(view(values, {8}), 0, 0), true); }), "(nothing raised)");
  // The CPU's TensorIterator does not check the overlap: it accumulates into the shared elements.
  Tensor cpu_base = view(from_values({1, 2, 3, 4}, ScalarType::Int64), {1, 4});
  index_put_(expand(cpu_base, {2, 4}), arange(2, ScalarType::Int64), to(values, Device{}), true);
  EXPECT_EQ(cpu_base.to_vector(), (std::vector<double>{3, 4, 5, 6}));
}

// The CPU's result of f on CPU copies of cuda operands: the device's kernels must agree with the CPU's loops.
std::vector<double> on_the_cpu(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                               const std::vector<Tensor>& cuda_operands) {
  std::vector<Tensor> cpu;
  for (const Tensor& t : cuda_operands) cpu.push_back(to(t, Device{}));
  return f(cpu).to_vector();
}

TEST_P(ImplCuda, GatherAgreesWithTheCpuForIndicesAndMasksOfEveryRank) {
  std::vector<double> v;
  for (int k = 0; k < 2 * 3 * 4; ++k) v.push_back(k * 0.5 - 3);
  Tensor x = to(view(from_values(v, ScalarType::Float32), {2, 3, 4}), kCuda);
  Tensor xt = transpose(to(view(from_values(v, ScalarType::Float32), {4, 3, 2}), kCuda), 0, 2);  // strided
  Tensor idx = to(view(from_values({1, -2, 0, 1, -1, 0}, ScalarType::Int64), {3, 2}), kCuda);
  Tensor idx32 = to(from_values({0, -1}, ScalarType::Int32), kCuda);
  std::vector<double> mask2;
  for (int k = 0; k < 6; ++k) mask2.push_back(k % 4 == 1 || k == 5);
  Tensor m1 = to(from_values({1, 0}, ScalarType::Bool), kCuda);
  Tensor m2 = to(view(from_values(mask2, ScalarType::Bool), {2, 3}), kCuda);
  Tensor m3 = to(view(from_values(mask2, ScalarType::Bool), {1, 2, 3}), kCuda);  // over a {1, 2, 3} self below
  Tensor m0 = to(full({}, Scalar::of(1), ScalarType::Bool), kCuda);
  auto index_of = [](const std::vector<Tensor>& t) { return index(t[0], t[1]); };
  auto agree = [&](const Tensor& self, const Tensor& i) {
    Tensor got = index(self, i);
    EXPECT_EQ(got.device(), kCuda);
    EXPECT_EQ(got.sizes(), index(to(self, Device{}), to(i, Device{})).sizes());
    EXPECT_EQ(got.to_vector(), on_the_cpu(index_of, {self, i})) << i.type_string();
  };
  for (const Tensor& self : {x, xt}) {
    for (const Tensor& i : {idx, m1, m2, m0, to(m2, Device{})}) agree(self, i);
    TargetTorchVersionGuard int32_indices{TorchVersion{2, 15}};  // 1.13 refuses them
    agree(self, idx32);
  }
  Tensor x123 = view(x, {4, 2, 3});
  EXPECT_EQ(index(narrow(x123, 0, 0, 1), m3).to_vector(), on_the_cpu(index_of, {narrow(x123, 0, 0, 1), m3}));
}

TEST_P(ImplCuda, NonzeroOfAMaskLongerThanAChunkKeepsRowMajorOrder) {
  std::vector<double> bits;
  for (int k = 0; k < 3 * 1500; ++k) bits.push_back((k * 7919) % 13 < 4);
  Tensor mask = to(view(from_values(bits, ScalarType::Bool), {3, 1500}), kCuda);
  Tensor x = to(view(arange(3 * 1500, ScalarType::Float32), {3, 1500}), kCuda);
  EXPECT_EQ(index(x, mask).to_vector(), index(to(x, Device{}), to(mask, Device{})).to_vector());
}

TEST_P(ImplCuda, ScatterResolvesDuplicatesInTheWalksOrderAsTheCpusSerialKernel) {
  // Duplicate rows: the last write wins; accumulated, float32 sums in the walk's order (1e8 + 1 - 1e8 is 0).
  Tensor idx = to(from_values({2, 0, 2, 2}, ScalarType::Int64), kCuda);
  Tensor values = to(view(from_values({1e8, 1, 1, 2, -1e8, 3, 5, 7}, ScalarType::Float32), {4, 2}), kCuda);
  for (bool accumulate : {false, true}) {
    Tensor self = to(view(from_values({10, 20, 30, 40, 50, 60}, ScalarType::Float32), {3, 2}), kCuda);
    index_put_(self, idx, values, accumulate);
    Tensor cpu = to(view(from_values({10, 20, 30, 40, 50, 60}, ScalarType::Float32), {3, 2}), Device{});
    index_put_(cpu, to(idx, Device{}), to(values, Device{}), accumulate);
    EXPECT_EQ(self.to_vector(), cpu.to_vector()) << accumulate;
  }
  // A mask over two dims of a transposed self.
  Tensor self = transpose(to(view(arange(6, ScalarType::Int64), {3, 2}), kCuda), 0, 1);
  Tensor mask = to(view(from_values({1, 0, 1, 0, 1, 1}, ScalarType::Bool), {2, 3}), kCuda);
  Tensor cpu = to(self, Device{});
  index_put_(self, mask, to(from_values({-1, -2, -3, -4}, ScalarType::Int64), kCuda), /*accumulate=*/true);
  index_put_(cpu, to(mask, Device{}), from_values({-1, -2, -3, -4}, ScalarType::Int64), true);
  EXPECT_EQ(self.to_vector(), cpu.to_vector());
}

TEST_P(ImplCuda, AnOutOfRangeIndexRaisesTheFirstOneTheWalkMeets) {
  Tensor x = to(from_values({1, 2, 3, 4}, ScalarType::Float32), kCuda);
  Tensor idx = to(from_values({1, 7, -9, 0}, ScalarType::Int64), kCuda);
  const std::string seven = "index 7 is out of bounds for dimension 0 with size 4";
  EXPECT_EQ(raised([&] { index(x, idx); }), seven);
  // A scatter writes the elements the walk met before it, as the CPU's serial kernel does.
  EXPECT_EQ(raised([&] { index_put_(x, idx, to(from_values({9, 9, 9, 9}, ScalarType::Float32), kCuda), false); }),
            seven);
  EXPECT_EQ(x.to_vector(), (std::vector<double>{1, 9, 3, 4}));
  // The walk follows the layout TensorIterator gives the result (here the transposed index's): the CPU's first.
  Tensor t = transpose(view(from_values({0, 8, 9, 0}, ScalarType::Int64), {2, 2}), 0, 1);
  const std::string cpu = raised([&] { index(to(x, Device{}), t); });
  EXPECT_EQ(cpu, "index 8 is out of bounds for dimension 0 with size 4");  // row-major would meet 9 first
  EXPECT_EQ(raised([&] { index(x, to(t, kCuda)); }), cpu);
  EXPECT_EQ(raised([&] { index_put_(x, to(t, kCuda), to(full({}, Scalar::of(5), ScalarType::Float32), kCuda), true); }),
            cpu);
}

TEST_P(ImplCuda, ArangeRoundsEachIndexOnceWhereTheCpusVectorsRoundTheirFirstIndexFirst) {
  // As float16, 32785 is nearest 32800. The CPU's vectorised part makes the vector of 16 from 32784 rounded
  // (32768, a tie to even) plus 1: 32768. Its scalar tail (the last n % 32 indices) and CUDA round once. A
  // bfloat16 vector at 4112 does the same (4113 is 4096 there, 4128 alone).
  const auto at = [](const Tensor& t, std::int64_t i) { return t.to_vector()[static_cast<std::size_t>(i)]; };
  EXPECT_EQ(at(arange(32832, ScalarType::Float16), 32785), 32768);
  EXPECT_EQ(at(arange(32799, ScalarType::Float16), 32785), 32800) << "in the tail";
  EXPECT_EQ(at(to(arange(32832, ScalarType::Float16, kCuda), Device{}), 32785), 32800);
  EXPECT_EQ(at(arange(4160, ScalarType::BFloat16), 4113), 4096);
  EXPECT_EQ(at(to(arange(4160, ScalarType::BFloat16, kCuda), Device{}), 4113), 4128);
  // The wider types hold every index the vectors add.
  EXPECT_EQ(at(arange(32832, ScalarType::Float32), 32785), 32785);
}

INSTANTIATE_TEST_SUITE_P(Memory, ImplCuda, ::testing::Values(Memory::Device, Memory::HostBacked),
                         [](const auto& info) { return info.param == Memory::Device ? "Device" : "HostBacked"; });

TEST(ImplCudaWithoutDevice, AllocationFailsCleanly) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; this test covers machines without one";
  EXPECT_THROW(empty({2}, ScalarType::Float32, MemoryFormat::Contiguous, kCuda), Error);
}

TEST(ImplCudaHostBackedScope, NestsAndRestores) {
  EXPECT_FALSE(cuda::host_backed());
  {
    cuda::HostBackedScope outer;
    {
      cuda::HostBackedScope inner;
      EXPECT_TRUE(cuda::host_backed());
    }
    EXPECT_TRUE(cuda::host_backed());
    EXPECT_TRUE(empty({1}, ScalarType::Float32, MemoryFormat::Contiguous, kCuda).storage().host_addressable());
  }
  EXPECT_FALSE(cuda::host_backed());
}

}  // namespace
}  // namespace parity::impl
