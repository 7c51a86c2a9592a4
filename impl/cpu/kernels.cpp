// The CPU build of impl/kernels, compiled once per instruction set: CMake builds this file with
// -DPARITY_CPU_CAPABILITY=baseline and again with =avx2 (and -mavx2 -mfma), each with -O3 and -ffp-contract=off,
// so that no build fuses a multiply and an add the others round twice.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "impl/cpu/executor.h"
#include "impl/cpu/kernels.h"

#ifndef PARITY_CPU_CAPABILITY
#error "impl/cpu/kernels.cpp is built by CMake once per capability, with PARITY_CPU_CAPABILITY set"
#endif

namespace parity::impl::cpu::PARITY_CPU_CAPABILITY {

void run_pointwise(const kernels::PointwiseCall& call) {
  PointwiseExecutor exec;
  kernels::run_pointwise(exec, call);
}

namespace {
// ATen's cascade_sum (aten/src/ATen/native/cpu/SumKernel.cpp) on a contiguous run of float or double, in its
// order, so that impl's sums of those carry LibTorch's bits (the 1.13.1 and 2.3.0 wheels agree on every length
// tried): each of kRows columns summed down the rows in kLevels levels of accumulators, a level passed up each
// 2^level_power rows, so that no accumulator takes more than that many terms.
constexpr int kLevels = 4;
template <typename Acc, int kRows, typename T>
void multi_row_sum(const T* x, std::int64_t size, Acc (&out)[kRows]) {
  // c10's CeilLog2, 1 below 3.
  const int ceil_log2 = size <= 2 ? 1 : std::bit_width(static_cast<std::uint64_t>(size) - 1);
  const int level_power = std::max(4, ceil_log2 / kLevels);
  const std::int64_t level_step = std::int64_t{1} << level_power;
  const std::int64_t level_mask = level_step - 1;
  Acc acc[kLevels][kRows] = {};
  std::int64_t i = 0;
  while (i + level_step <= size) {
    for (std::int64_t j = 0; j < level_step; ++j, ++i)
      for (int k = 0; k < kRows; ++k) acc[0][k] += static_cast<Acc>(x[i * kRows + k]);
    for (int j = 1; j < kLevels; ++j) {
      for (int k = 0; k < kRows; ++k) {
        acc[j][k] += acc[j - 1][k];
        acc[j - 1][k] = Acc(0);
      }
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int k = 0; k < kRows; ++k) acc[0][k] += static_cast<Acc>(x[i * kRows + k]);
  for (int j = 1; j < kLevels; ++j)
    for (int k = 0; k < kRows; ++k) acc[0][k] += acc[j][k];
  std::copy(acc[0], acc[0] + kRows, out);
}

// row_sum: `size` elements of kLanes consecutive values each (a Vectorized, or one value), read kIlp elements to
// a row, the rows' columns summed by multi_row_sum, the elements left over added to the first, then the kIlp
// partial sums added in order.
template <typename Acc, int kLanes, typename T>
void row_sum(const T* x, std::int64_t size, Acc (&out)[kLanes]) {
  constexpr int kIlp = 4;
  const std::int64_t size_ilp = size / kIlp;
  Acc partial[kIlp * kLanes];
  multi_row_sum<Acc, kIlp * kLanes>(x, size_ilp, partial);
  for (std::int64_t i = size_ilp * kIlp; i < size; ++i)
    for (int l = 0; l < kLanes; ++l) partial[l] += static_cast<Acc>(x[i * kLanes + l]);
  for (int k = 1; k < kIlp; ++k)
    for (int l = 0; l < kLanes; ++l) partial[l] += partial[k * kLanes + l];
  std::copy(partial, partial + kLanes, out);
}

// One contiguous run, as the kernel's inner reduction takes it: in Vectorized elements of 32 bytes (AVX2's, and
// the generic one's; LibTorch's sum takes no wider one on an AVX-512 machine), the values past the last whole
// one summed first, then each lane added in order; a run shorter than one Vectorized a value at a time.
template <typename T>
T aten_inner_sum(const T* x, std::int64_t n) {
  constexpr int kLanes = static_cast<int>(32 / sizeof(T));
  if (n < kLanes) {
    T one[1];
    row_sum<T, 1>(x, n, one);
    return one[0];
  }
  const std::int64_t vectors = n / kLanes;
  T lanes[kLanes];
  row_sum<T, kLanes>(x, vectors, lanes);
  T total = T(0);
  for (std::int64_t k = vectors * kLanes; k < n; ++k) total += x[k];
  for (int l = 0; l < kLanes; ++l) total += lanes[l];
  return total;
}

// The sum of one run of n elements `stride` apart. A contiguous float or double one in ATen's order; the others
// (strided, 16-bit, integral) in blocks of kBlock elements, each summed in interleaved lanes (which the compiler
// keeps in vector registers), the lanes and then the blocks combined pairwise: a float sum's error so grows with
// log(n), as with ATen's cascade sum, rather than with n.
template <typename T>
typename kernels::SumOp<T>::acc_t sum_run(const T* x, std::int64_t n, std::int64_t stride) {
  using Op = kernels::SumOp<T>;
  using Acc = typename Op::acc_t;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    if (stride == 1) return aten_inner_sum(x, n);
  constexpr std::int64_t kBlock = 2048;
  if (n > kBlock) {
    const std::int64_t half = ((n + kBlock - 1) / kBlock + 1) / 2 * kBlock;
    return Op::combine(sum_run(x, half, stride), sum_run(x + half * stride, n - half, stride));
  }
  constexpr int kLanes = static_cast<int>(64 / sizeof(Acc));
  Acc lane[kLanes] = {};
  std::int64_t i = 0;
  if (stride == 1) {
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] = Op::reduce(lane[l], x[i + l]);
  } else {
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) lane[l] = Op::reduce(lane[l], x[(i + l) * stride]);
  }
  for (int l = 0; i < n; ++i, ++l) lane[l] = Op::reduce(lane[l], x[i * stride]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] = Op::combine(lane[l], lane[l + w]);
  return lane[0];
}

template <typename T>
void sum(const kernels::SumCall& c) {
  using Op = kernels::SumOp<T>;
  using Out = typename Op::out_t;
  Out* out = static_cast<Out*>(c.out);
  const T* in = static_cast<const T*>(c.in);
  for_each_run(c.outer, [&](const std::int64_t* off, std::int64_t n, const std::int64_t* s) {
    for (std::int64_t r = 0; r < n; ++r) {
      const T* first = in + off[1] + r * s[1];
      Out& o = out[off[0] + r * s[0]];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        if (c.round_each_run) {
          Out total = Out(0.0f);
          for_each_run(c.inner, [&](const std::int64_t* ioff, std::int64_t m, const std::int64_t* is) {
            const float run = static_cast<float>(Op::project(sum_run(first + ioff[0], m, is[0])));
            total = Out(static_cast<float>(total) + run);
          });
          o = total;
          continue;
        }
      }
      typename Op::acc_t acc = 0;
      for_each_run(c.inner, [&](const std::int64_t* ioff, std::int64_t m, const std::int64_t* is) {
        acc = Op::combine(acc, sum_run(first + ioff[0], m, is[0]));
      });
      o = Op::project(acc);
    }
  });
}
}  // namespace

void run_sum(const kernels::SumCall& call) {
  dispatch(call.dtype, [&](auto tag) { sum<decltype(tag)>(call); });
}

}  // namespace parity::impl::cpu::PARITY_CPU_CAPABILITY
