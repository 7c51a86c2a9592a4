// The CPU build of impl/kernels, compiled once per instruction set: CMake builds this file with
// -DPARITY_CPU_CAPABILITY=baseline and again with =avx2 (and -mavx2 -mfma), each with -O3 and -ffp-contract=off,
// so that no build fuses a multiply and an add the others round twice.
#include <cstdint>

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
// The sum of one run of n elements `stride` apart: blocks of kBlock elements, each summed in interleaved lanes
// (which the compiler keeps in vector registers), the lanes and then the blocks combined pairwise. The error of
// a float sum so grows with log(n), as with ATen's cascade sum, rather than with n.
template <typename T>
typename kernels::SumOp<T>::acc_t sum_run(const T* x, std::int64_t n, std::int64_t stride) {
  using Op = kernels::SumOp<T>;
  using Acc = typename Op::acc_t;
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
