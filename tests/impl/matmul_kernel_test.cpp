// The CPU run of impl's one matmul kernel source (impl/kernels/matmul.h through impl/cpu/matmul.h, and
// impl/cpu/gemm.h's blocked float and double products) gives the bits of the one-element-at-a-time loop impl
// models LibTorch by (below, as matmul_kernel had it): every dtype, strided, transposed and batched operands, edge
// tiles, k past one packed slice, both ways of summing 16-bit products and both of adding float products.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "impl/cpu/matmul.h"
#include "impl/ops.h"
#include "impl/torch_version.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

// The release these suites expect LibTorch's behaviour of (tests/support/impl_release.h).
class MatmulKernel : public parity::testing::FollowsTorch113 {};

// The reference: each element alone, k ascending, in the element type (1.13) or, for 16-bit floats, in float;
// float and double products added by std::fma when fused.
void reference(const Tensor& out, const Tensor& a, const Tensor& b, kernels::MatmulRounding rounding) {
  auto batched = [](const Dims& d, std::int64_t pad) {
    Dims r = d;
    if (r.size() == 2) r.insert(r.begin(), pad);
    return r;
  };
  const Dims on = batched(out.sizes(), 1), os = batched(out.strides(), 0);
  const Dims as = batched(a.strides(), 0), bs = batched(b.strides(), 0);
  const std::int64_t inner = a.sizes().back();
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    for (std::int64_t n = 0; n < on[0]; ++n)
      for (std::int64_t i = 0; i < on[1]; ++i)
        for (std::int64_t j = 0; j < on[2]; ++j) {
          const T* row = x + n * as[0] + i * as[1];
          const T* col = y + n * bs[0] + j * bs[2];
          if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
            if (rounding.sum_16bit_in_float) {
              float acc = 0;
              for (std::int64_t k = 0; k < inner; ++k)
                acc += static_cast<float>(row[k * as[2]]) * static_cast<float>(col[k * bs[1]]);
              o[n * os[0] + i * os[1] + j * os[2]] = T(acc);
              continue;
            }
          }
          T acc = T(0);
          for (std::int64_t k = 0; k < inner; ++k) {
            if constexpr (std::is_same_v<T, bool>) acc = acc || (row[k * as[2]] && col[k * bs[1]]);
            else if constexpr (std::is_floating_point_v<T>)
              acc = rounding.fused ? std::fma(row[k * as[2]], col[k * bs[1]], acc)
                                   : static_cast<T>(acc + static_cast<T>(row[k * as[2]] * col[k * bs[1]]));
            else acc = static_cast<T>(acc + static_cast<T>(row[k * as[2]] * col[k * bs[1]]));
          }
          o[n * os[0] + i * os[1] + j * os[2]] = acc;
        }
  });
}

// Values whose products and sums round (floats), stay clear of signed overflow (integers: the reference's
// arithmetic is signed), or mix true and false (bool).
Tensor values(std::int64_t n, ScalarType t, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if (t == ScalarType::Bool) x = rng() % 4 == 0;
    else if (is_integral(t, false)) x = static_cast<double>(static_cast<int>(rng() % 2001) - 1000);
    else x = std::uniform_real_distribution<double>(-3, 3)(rng) * (element_size(t) > 2 && rng() % 8 == 0 ? 1e3 : 1);
  }
  return from_values(v, t);
}

Tensor dense_out(const Dims& sizes, ScalarType t) { return Tensor::allocate(Layout::dense(sizes), t); }

// Both results' storages byte for byte (the same layouts over fresh storages).
void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.storage().nbytes(), want.storage().nbytes()) << what;
  const auto* g = static_cast<const unsigned char*>(got.storage().data());
  const auto* w = static_cast<const unsigned char*>(want.storage().data());
  const std::size_t size = element_size(got.dtype());
  for (std::size_t e = 0; e < got.storage().nbytes() / size; ++e)
    if (std::memcmp(g + e * size, w + e * size, size) != 0) {
      ADD_FAILURE() << what << ": element " << e << " of the storage differs";
      return;
    }
}

// A result laid out like `like` (same sizes and strides) over a storage of its own.
Tensor fresh_like(const Tensor& like) {
  return Tensor::allocate(Layout{like.sizes(), like.strides(), 0}, like.dtype());
}

void expect_matches_reference(const Tensor& out_layout, const Tensor& a, const Tensor& b,
                              kernels::MatmulRounding rounding, const std::string& what) {
  Tensor got = fresh_like(out_layout), want = fresh_like(out_layout);
  cpu::matmul(got, a, b, rounding);
  reference(want, a, b, rounding);
  expect_same_bits(got, want, what);
}

constexpr ScalarType kTypes[] = {ScalarType::Float32, ScalarType::Float64, ScalarType::Float16,
                                 ScalarType::BFloat16, ScalarType::Int32,   ScalarType::Int64,
                                 ScalarType::Bool};

// Every combination of the two roundings' choices.
constexpr kernels::MatmulRounding kRoundings[] = {{false, false}, {true, false}, {false, true}, {true, true}};

std::string name(ScalarType t, kernels::MatmulRounding r, const char* shape) {
  return std::string(type_name(t)) + (r.sum_16bit_in_float ? " in float, " : " rounding each step, ") +
         (r.fused ? "fused, " : "") + shape;
}

TEST_F(MatmulKernel, ContiguousOperandsOfEveryDtypeAndEdgeTiles) {
  // Sizes that leave partial tiles in every direction, ones of whole tiles, and ones past a packed slice of k
  // and a block of rows (impl/cpu/gemm.cpp's kDepth, kBlockRows).
  const std::int64_t shapes[][3] = {{13, 37, 19}, {64, 64, 64}, {1, 1, 1}, {5, 200, 3}, {2, 3, 33}, {100, 600, 70}};
  for (ScalarType t : kTypes)
    for (kernels::MatmulRounding rounding : kRoundings)
      for (const auto& s : shapes) {
        const std::int64_t m = s[0], k = s[1], n = s[2];
        Tensor a = reshape(values(m * k, t, 1), {m, k}), b = reshape(values(k * n, t, 2), {k, n});
        expect_matches_reference(dense_out({m, n}, t), a, b, rounding,
                                 name(t, rounding, "contiguous") + " " + std::to_string(m) + "x" +
                                     std::to_string(k) + "x" + std::to_string(n));
      }
}

TEST_F(MatmulKernel, TransposedAndSteppedOperandsAndOutput) {
  const std::int64_t m = 11, k = 23, n = 17;
  for (ScalarType t : kTypes)
    for (kernels::MatmulRounding rounding : kRoundings) {
      // a: the transpose of a (k, m) matrix; b: every other column and row of a larger one, at an offset.
      Tensor a = transpose(reshape(values(k * m, t, 3), {k, m}), 0, 1);
      Tensor b = as_strided(values(4 * k * n + 5, t, 4), {k, n}, {2 * 2 * n, 2}, 5);
      // The output transposed too: its rows are columns of its storage.
      Tensor out = transpose(dense_out({n, m}, t), 0, 1);
      expect_matches_reference(out, a, b, rounding, name(t, rounding, "strided"));
    }
}

TEST_F(MatmulKernel, BatchedOperandsIncludingARepeatedMatrix) {
  const std::int64_t batches = 3, m = 7, k = 29, n = 10;
  for (ScalarType t : kTypes)
    for (kernels::MatmulRounding rounding : kRoundings) {
      Tensor a = reshape(values(batches * m * k, t, 5), {batches, m, k});
      // One matrix for every batch (batch stride 0), itself transposed.
      Tensor b = expand(unsqueeze(transpose(reshape(values(n * k, t, 6), {n, k}), 0, 1), 0), {batches, k, n});
      expect_matches_reference(dense_out({batches, m, n}, t), a, b, rounding, name(t, rounding, "batched"));
      // A batched output of permuted strides.
      Tensor out = permute(dense_out({m, batches, n}, t), {1, 0, 2});
      expect_matches_reference(out, a, b, rounding, name(t, rounding, "batched, permuted output"));
    }
}

TEST_F(MatmulKernel, EmptyInnerDimensionGivesZeros) {
  for (ScalarType t : kTypes) {
    Tensor a = reshape(values(0, t, 7), {4, 0}), b = reshape(values(0, t, 8), {0, 9});
    Tensor got = dense_out({4, 9}, t);
    dispatch(t, [&](auto tag) {
      using T = decltype(tag);
      std::fill(got.data<T>(), got.data<T>() + got.numel(), T(1));
    });
    cpu::matmul(got, a, b, {});
    for (double v : got.to_vector()) EXPECT_EQ(v, 0.0) << type_name(t);
  }
}

// Integers wrap as two's complement, as the element type's arithmetic does (the reference sums exactly in int64
// here, far from its own overflow, and keeps the low 32 bits).
TEST_F(MatmulKernel, Int32SumsWrap) {
  const std::int64_t m = 3, k = 9, n = 4;
  std::vector<double> av, bv;
  for (std::int64_t e = 0; e < m * k; ++e) av.push_back(static_cast<double>((1 << 20) + 7 * e));
  for (std::int64_t e = 0; e < k * n; ++e) bv.push_back(static_cast<double>((1 << 19) - 13 * e));
  Tensor a = reshape(from_values(av, ScalarType::Int32), {m, k}), b = reshape(from_values(bv, ScalarType::Int32), {k, n});
  Tensor got = dense_out({m, n}, ScalarType::Int32);
  cpu::matmul(got, a, b, {});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t exact = 0;
      for (std::int64_t kk = 0; kk < k; ++kk)
        exact += static_cast<std::int64_t>(av[i * k + kk]) * static_cast<std::int64_t>(bv[kk * n + j]);
      EXPECT_EQ(got.data<std::int32_t>()[i * n + j], static_cast<std::int32_t>(exact)) << i << "," << j;
    }
}

// matmul_kernel picks the policy from the release it follows (VersionGate::ProductsAccumulateInFloat): mm of
// bfloat16 (the dtype its dispatch takes in both releases) agrees with the reference of that release's policy,
// and the two policies differ on these values.
TEST_F(MatmulKernel, MmFollowsTheReleaseItIsJudgedAgainst) {
  const std::int64_t m = 6, k = 300, n = 5;
  Tensor a = reshape(values(m * k, ScalarType::BFloat16, 9), {m, k});
  Tensor b = reshape(values(k * n, ScalarType::BFloat16, 10), {k, n});
  Tensor want113 = dense_out({m, n}, ScalarType::BFloat16), want215 = dense_out({m, n}, ScalarType::BFloat16);
  reference(want113, a, b, {.sum_16bit_in_float = false});
  reference(want215, a, b, {.sum_16bit_in_float = true});
  EXPECT_NE(want113.to_vector(), want215.to_vector());
  {
    TargetTorchVersionGuard g(TorchVersion{1, 13});
    expect_same_bits(mm(a, b), want113, "mm following 1.13");
  }
  {
    TargetTorchVersionGuard g(TorchVersion{2, 15});
    expect_same_bits(mm(a, b), want215, "mm following 2.15");
  }
}

// mm's float products are fused where 2.x's BLAS fuses them (VersionGate::BlasFusesMultiplyAdd), never in 1.13's
// reference BLAS, and never in the loop ATen runs itself for a small bmm (fewer than 400 products' elements).
TEST_F(MatmulKernel, FloatProductsFuseOnlyInReleaseTwosBlas) {
  const std::int64_t m = 6, k = 300, n = 5;
  Tensor a = reshape(values(m * k, ScalarType::Float32, 11), {m, k});
  Tensor b = reshape(values(k * n, ScalarType::Float32, 12), {k, n});
  Tensor rounded = dense_out({m, n}, ScalarType::Float32), fused = dense_out({m, n}, ScalarType::Float32);
  reference(rounded, a, b, {.fused = false});
  reference(fused, a, b, {.fused = true});
  EXPECT_NE(rounded.to_vector(), fused.to_vector());
  {
    TargetTorchVersionGuard g(TorchVersion{1, 13});
    expect_same_bits(mm(a, b), rounded, "mm following 1.13");
  }
  TargetTorchVersionGuard g(TorchVersion{2, 15});
  expect_same_bits(mm(a, b), fused, "mm following 2.15");
  // matmul of 3-d operands is a bmm: 1 x 300 x 1 a small one, 6 x 300 x 5 not.
  Tensor row = reshape(select(a, 0, 0), {1, 1, k}), col = reshape(select(b, 1, 0), {1, k, 1});
  Tensor small_rounded = dense_out({1, 1}, ScalarType::Float32);
  reference(small_rounded, reshape(row, {1, k}), reshape(col, {k, 1}), {.fused = false});
  EXPECT_EQ(matmul(row, col).to_vector(), small_rounded.to_vector()) << "a small bmm's own loop";
  expect_same_bits(matmul(unsqueeze(a, 0), unsqueeze(b, 0)), fused, "a large bmm's BLAS");
}

}  // namespace
}  // namespace parity::impl
