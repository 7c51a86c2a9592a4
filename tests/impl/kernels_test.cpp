// impl/kernels run on the CPU: the CPU executor's fast paths against the per-element order the CUDA launcher
// uses (kernels::offsets from a linear index, emulated here on the host with the same functors), and each CPU
// instruction set's build against the others. Without a GPU, this is how the device's kernel code is exercised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "impl/cpu/kernels.h"
#include "impl/cpu/loops.h"
#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"
#include "impl/ops.h"

namespace parity::impl {
namespace {

using kernels::Geometry;

// What impl/cuda/pointwise.cu's threads do, one linear index at a time.
struct EmulatedLauncher {
  template <typename F, typename R, typename... A, std::size_t... I>
  static void at(const F& f, const kernels::PointwiseCall& c, std::int64_t linear, std::tuple<A...>*,
                 std::index_sequence<I...>) {
    std::int64_t off[kernels::kMaxOperands];
    kernels::offsets(c.geometry, linear, off);
    static_cast<R*>(c.data[0])[off[0]] = f(static_cast<const A*>(c.data[I + 1])[off[I + 1]]...);
  }
  template <typename F>
  void operator()(const kernels::PointwiseCall& c, const F& f) const {
    using S = kernels::SignatureOf<F>;
    constexpr std::size_t n = std::tuple_size_v<typename S::In>;
    for (std::int64_t i = 0; i < c.geometry.numel; ++i)
      at<F, typename S::Out>(f, c, i, static_cast<typename S::In*>(nullptr), std::make_index_sequence<n>{});
  }
};

// A strided operand: `storage` floats/whatever, laid out by sizes/strides (possibly broadcast or permuted).
struct Case {
  Dims shape;
  std::vector<Dims> strides;  // output first
};

std::vector<Case> layouts() {
  return {
      {{7}, {{1}, {1}, {1}}},
      {{3, 5}, {{5, 1}, {5, 1}, {0, 1}}},                  // broadcast row
      {{3, 5}, {{5, 1}, {1, 3}, {5, 1}}},                  // a transposed input
      {{64, 80}, {{80, 1}, {1, 64}, {0, 0}}},              // tiled permute, a broadcast scalar
      {{70, 75}, {{75, 1}, {1, 70}, {0, 0}}},              // tiled permute, tiles cut short on both sides
      {{2, 72, 60}, {{4320, 60, 1}, {4320, 1, 72}, {0, 0, 1}}},  // tiled permute under an outer dim, cut short
      {{2, 64, 9, 9}, {{5184, 81, 9, 1}, {5184, 1, 576, 64}, {0, 1, 0, 0}}},  // channels_last -> contiguous
      {{4, 1, 6}, {{6, 6, 1}, {1, 1, 4}, {6, 0, 1}}},      // a size-1 dim
      {{5, 6}, {{1, 5}, {6, 1}, {0, 1}}},                  // a transposed output
      {{2, 3, 0}, {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}}},      // empty
      {{}, {{}, {}, {}}},                                  // one element
  };
}

// Operand k's strides: a third input walks as the second does.
const Dims& strides_of(const Case& c, std::size_t k) { return c.strides[std::min(k, c.strides.size() - 1)]; }

std::int64_t extent(const Case& c, std::size_t k) {
  std::int64_t e = 1;
  for (std::size_t d = 0; d < c.shape.size(); ++d)
    if (c.shape[d] > 0) e += (c.shape[d] - 1) * strides_of(c, k)[d];
  return e;
}

template <typename T>
std::vector<T> values(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

// Runs `call` (its data filled from `inputs`) with each executor and compares the outputs bit for bit.
template <typename Out, typename In>
void expect_same_everywhere(kernels::PointwiseCall call, const Case& c, int ninputs) {
  std::vector<In> in[3];
  for (int k = 0; k < ninputs; ++k) in[k] = values<In>(extent(c, static_cast<std::size_t>(k) + 1), 11u + static_cast<std::uint32_t>(k));
  const std::int64_t* st[4] = {};
  for (int k = 0; k <= ninputs; ++k) st[k] = strides_of(c, static_cast<std::size_t>(k)).data();
  ASSERT_TRUE(kernels::make_geometry(static_cast<int>(c.shape.size()), c.shape.data(), ninputs + 1, st, call.geometry));
  for (int k = 0; k < ninputs; ++k) call.data[k + 1] = in[k].data();
  auto run = [&](auto&& exec) {
    std::vector<Out> out(static_cast<std::size_t>(extent(c, 0)), Out(0));
    call.data[0] = out.data();
    exec(call);
    std::vector<unsigned char> bytes(out.size() * sizeof(Out));
    std::memcpy(bytes.data(), out.data(), bytes.size());
    return bytes;
  };
  const auto emulated = run([](const kernels::PointwiseCall& x) {
    EmulatedLauncher l;
    kernels::run_pointwise(l, x);
  });
  EXPECT_EQ(run([](const kernels::PointwiseCall& x) { cpu::baseline::run_pointwise(x); }), emulated);
  EXPECT_EQ(run([](const kernels::PointwiseCall& x) { cpu::avx2::run_pointwise(x); }), emulated);
  EXPECT_EQ(run([](const kernels::PointwiseCall& x) { cpu::run_pointwise(x); }), emulated);
}

TEST(ImplKernels, CpuExecutorMatchesTheDeviceOrderOnEveryLayout) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2: only the baseline build can run";
  for (const Case& c : layouts()) {
    SCOPED_TRACE(testing::PrintToString(c.shape));
    kernels::PointwiseCall call;
    call.kind = kernels::Pointwise::Binary;
    call.dtype = ScalarType::Float32;
    for (auto op : {kernels::BinaryOp::Add, kernels::BinaryOp::Sub, kernels::BinaryOp::Mul, kernels::BinaryOp::Div}) {
      call.binary = op;
      expect_same_everywhere<float, float>(call, c, 2);
    }
    call.dtype = ScalarType::Float64;
    expect_same_everywhere<double, double>(call, c, 2);
    call.kind = kernels::Pointwise::Unary;
    call.dtype = ScalarType::BFloat16;
    for (auto op : {kernels::UnaryOp::Exp, kernels::UnaryOp::Sigmoid, kernels::UnaryOp::Tanh, kernels::UnaryOp::Sqrt,
                    kernels::UnaryOp::Sin, kernels::UnaryOp::Cos, kernels::UnaryOp::Abs, kernels::UnaryOp::Neg}) {
      call.unary = op;
      expect_same_everywhere<BFloat16, BFloat16>(call, c, 1);
    }
    call.kind = kernels::Pointwise::Copy;
    call.dtype = ScalarType::Float16;
    call.src_dtype = ScalarType::Float64;
    expect_same_everywhere<Half, double>(call, c, 1);
    call.dtype = ScalarType::Int64;
    call.src_dtype = ScalarType::Float32;
    expect_same_everywhere<std::int64_t, float>(call, c, 1);
    call.kind = kernels::Pointwise::Addcmul;
    call.dtype = ScalarType::Float32;
    call.a = 0.75;
    expect_same_everywhere<float, float>(call, c, 3);
    call.kind = kernels::Pointwise::Clamp;
    call.has_a = call.has_b = true;
    call.a = -1;
    call.b = 2.5;
    expect_same_everywhere<float, float>(call, c, 1);
    call.kind = kernels::Pointwise::Fill;
    expect_same_everywhere<float, float>(call, c, 0);
  }
}

TEST(ImplKernels, GeometryOffsetsFollowTheOdometer) {
  // The CUDA launcher's offsets from a linear index against the CPU walk's, in row-major order.
  for (const Case& c : layouts()) {
    const Geometry g = cpu::geometry_of(c.shape, {&c.strides[0], &c.strides[1], &c.strides[2]});
    std::int64_t linear = 0;
    cpu::for_each_offset(c.shape, {&c.strides[0], &c.strides[1], &c.strides[2]}, [&](const std::int64_t* off) {
      std::int64_t at[kernels::kMaxOperands];
      kernels::offsets(g, linear++, at);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(at[k], off[k]) << "operand " << k << " at " << linear - 1;
    });
    EXPECT_EQ(linear, g.numel);
  }
}

TEST(ImplKernels, AKernelWalksAsManyDimsAsATensorHas) {
  // 18 dims of size 2 with strides reversed (element i at the bit-reversal of i): nothing coalesces.
  constexpr int kDims = 18;
  std::vector<double> values(std::size_t{1} << kDims);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const Tensor flat = from_values(values, ScalarType::Float32);
  Dims sizes(kDims, 2), strides(kDims);
  for (int d = 0; d < kDims; ++d) strides[static_cast<std::size_t>(d)] = std::int64_t{1} << d;
  const Tensor reversed = Tensor::over(flat.storage(), Layout{sizes, strides, 0}, flat.dtype(), flat.version_counter());
  const std::vector<double> got = clone(reversed, MemoryFormat::Contiguous).to_vector();
  ASSERT_EQ(got.size(), values.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::size_t reversed_i = 0;
    for (int d = 0; d < kDims; ++d) reversed_i |= ((i >> (kDims - 1 - d)) & 1u) << d;
    ASSERT_EQ(got[i], static_cast<double>(reversed_i)) << "at " << i;
  }
}

TEST(ImplKernels, CoalescingMergesWhatEveryOperandWalksAsOne) {
  const Dims shape{2, 3, 4}, dense{12, 4, 1}, bcast{0, 0, 1}, transposed{1, 2, 6};
  EXPECT_EQ(cpu::geometry_of(shape, {&dense, &dense}).ndim, 1);
  EXPECT_EQ(cpu::geometry_of(shape, {&dense, &bcast}).ndim, 2);
  EXPECT_EQ(cpu::geometry_of(shape, {&dense, &transposed}).ndim, 3);
}

template <typename T>
ScalarType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::Float32;
  else if constexpr (std::is_same_v<T, double>) return ScalarType::Float64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ScalarType::Int32;
  else return ScalarType::Int64;
}

// A sum: the CPU's blocked lanes against a device thread's in-order sum, and the builds against each other.
template <typename T>
void check_sum(std::int64_t n, std::int64_t stride, double tolerance) {
  std::vector<T> x = values<T>(n * stride, 5);
  for (auto& v : x) v = static_cast<T>(static_cast<double>(v) * 0.37);
  kernels::SumCall c;
  c.dtype = dtype_of<T>();
  const std::int64_t one = 1, size = n, in_stride = stride, zero = 0;
  const std::int64_t* outer_st[] = {&zero, &zero};
  const std::int64_t* inner_st[] = {&in_stride};
  ASSERT_TRUE(kernels::make_geometry(1, &one, 2, outer_st, c.outer));
  ASSERT_TRUE(kernels::make_geometry(1, &size, 1, inner_st, c.inner));
  c.in = x.data();
  using Out = typename kernels::SumOp<T>::out_t;
  Out base{}, wide{};
  c.out = &base;
  cpu::baseline::run_sum(c);
  c.out = &wide;
  cpu::avx2::run_sum(c);
  const double in_order = static_cast<double>(kernels::SumOp<T>::project(kernels::sum_in_order(c.inner, x.data())));
  double exact = 0, magnitude = 0;  // error bounds of a float sum scale with the sum of magnitudes
  for (std::int64_t i = 0; i < n; ++i) {
    exact += static_cast<double>(x[static_cast<std::size_t>(i * stride)]);
    magnitude += std::abs(static_cast<double>(x[static_cast<std::size_t>(i * stride)]));
  }
  EXPECT_EQ(std::memcmp(&base, &wide, sizeof(Out)), 0) << "the baseline and AVX2 builds differ";
  // The CPU's pairwise blocks keep the error near the rounding of a few additions (tolerance: about 16 units in
  // the last place, relative to the magnitudes); a device thread's in-order sum may lose up to n of them.
  EXPECT_NEAR(static_cast<double>(base), exact, tolerance * magnitude);
  EXPECT_NEAR(in_order, exact, tolerance / 16 * static_cast<double>(n) * magnitude);
}

TEST(ImplKernels, SumsAgreeAcrossExecutorsAndBuilds) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "this CPU has no AVX2: only the baseline build can run";
  for (std::int64_t n : {0, 1, 15, 16, 17, 2047, 2048, 2049, 100003}) {
    SCOPED_TRACE(n);
    check_sum<float>(n, 1, 1e-6);
    check_sum<float>(n, 3, 1e-6);
    check_sum<double>(n, 1, 2e-15);
    check_sum<std::int64_t>(n, 2, 0);
    check_sum<std::int32_t>(n, 1, 0);
  }
}

// A float16 or bfloat16 sum that LibTorch's iterator walks as two or more groups of reduced dims: before 2.3
// (VersionGate::ReducedFloatSumsAccumulateInFloat) each run of the fastest group is rounded into a running total
// of the element type, since then it is summed in float and rounded once. Values from pytorch#83149 and the
// 1.13.1 and 2.3.0 wheels.
TEST(ImplKernels, ReducedFloatSumsRoundEachRunBeforeRelease2_3) {
  struct Case {
    const char* what;
    Tensor x;
    Dims dims;
    bool keepdim;
    double before, since;
  };
  auto sliced = [] { return narrow(from_values({128, 128, 0, 9, 1, 1.0 / 256, 0, 9}, {2, 4}, ScalarType::BFloat16), 1, 0, 3); };
  for (ScalarType t : {ScalarType::BFloat16, ScalarType::Float16}) {
    TargetTorchVersionGuard made(TorchVersion{2, 15});
    const std::vector<Case> cases = {
        // ones(10,13,3,3).transpose(2,3): 130 runs of 3 each output; bfloat16 stalls at 432, float16 does not.
        {"transposed", transpose(ones({10, 13, 3, 3}, t), 2, 3), {0, 1, 2}, false,
         t == ScalarType::BFloat16 ? 432.0 : 390.0, 390},
        // Contiguous, but dims 0 and 2 are apart: 300 runs of 2.0 each output.
        {"apart", ones({300, 4, 2}, t), {0, 2}, true, t == ScalarType::BFloat16 ? 512.0 : 600.0, 600},
        // One group: a single store, rounded once in every release.
        {"one group", ones({2, 4, 300}, t), {0, 2}, false, 600, 600},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (t == ScalarType::BFloat16 ? " bfloat16" : " float16"));
      for (const auto& [release, want] : {std::pair{TorchVersion{1, 13}, c.before}, {TorchVersion{2, 3}, c.since}}) {
        TargetTorchVersionGuard g(release);
        for (double v : sum(c.x, c.dims, c.keepdim).to_vector()) EXPECT_EQ(v, want);
      }
    }
  }
  // Two rows of a sliced bfloat16 tensor: 256 + bf16(1 + 2^-8) rounds to 256 in two steps, 257.0039 to 258 in one.
  {
    TargetTorchVersionGuard g(TorchVersion{1, 13});
    EXPECT_EQ(sum(sliced()).to_vector(), std::vector<double>{256});
  }
  TargetTorchVersionGuard g(TorchVersion{2, 15});
  EXPECT_EQ(sum(sliced()).to_vector(), std::vector<double>{258});
}

// A contiguous float or double sum takes ATen's cascade order (SumKernel.cpp), so that its bits are LibTorch's.
// Values from the 1.13.1 and 2.3.0 wheels, which agree; a sum in order gives others (173793889901473.75 for the
// first), and impl's former blocks drifted to 998847.5 over 2^20 equal floats.
TEST(ImplKernels, FloatSumsTakeATensOrder) {
  auto mixed = [](int n, ScalarType t) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(((i * 7919) % 1000 - 500) / 64.0 * std::ldexp(1.0, (i % 9) * 6));
    return from_values(v, t);
  };
  for (TorchVersion release : {TorchVersion{1, 13}, TorchVersion{2, 15}}) {
    TargetTorchVersionGuard g(release);
    EXPECT_EQ(sum(mixed(37, ScalarType::Float64)).to_vector(), std::vector<double>{173793889901474.0});
    EXPECT_EQ(sum(mixed(301, ScalarType::Float64)).to_vector(), std::vector<double>{888269521949654.0});
    EXPECT_EQ(sum(mixed(37, ScalarType::Float32)).to_vector(), std::vector<double>{173793838366720.0});
    EXPECT_EQ(sum(mixed(301, ScalarType::Float32)).to_vector(), std::vector<double>{888269231357952.0});
    EXPECT_EQ(sum(full({1024, 1024}, Scalar::of(0.9525741338729858), ScalarType::Float32)).to_vector(),
              std::vector<double>{998846.0625});
  }
}

}  // namespace
}  // namespace parity::impl
