// impl's sum reduction, written once for both devices: the accumulation (SumOp: PyTorch's accumulation types,
// reduce one element, combine two partial sums, project to the output) and the index spaces (an output's
// elements, and the input elements each one sums). The executors choose the order in which partial sums
// combine, as ATen's CPU and CUDA reductions do: impl/cpu sums a contiguous float or double run in ATen's cascade
// order and other runs in blocks of interleaved lanes combined pairwise (impl/cpu/kernels.cpp), a CUDA thread sums
// its output's elements in order.
#pragma once
#include <cstdint>
#include <type_traits>

#include "impl/kernels/geometry.h"
#include "impl/kernels/host_device.h"
#include "impl/scalar_type.h"

namespace parity::impl::kernels {

inline namespace PARITY_KERNEL_ISA {

// at::opmath / acc_type on the CPU: float for float and the 16-bit types, double for double; integral sums are
// int64 and wrap around as two's complement (so they accumulate in uint64, never through a double).
template <typename T>
struct SumOp {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                   std::conditional_t<is_floating_v<T>, float, std::uint64_t>>;
  using out_t = std::conditional_t<is_floating_v<T>, T, std::int64_t>;
  PARITY_HOST_DEVICE static acc_t reduce(acc_t acc, T v) {
    if constexpr (std::is_same_v<acc_t, std::uint64_t>) return acc + static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    else return acc + static_cast<acc_t>(v);
  }
  PARITY_HOST_DEVICE static acc_t combine(acc_t a, acc_t b) { return a + b; }
  PARITY_HOST_DEVICE static out_t project(acc_t acc) { return static_cast<out_t>(acc); }
};

}  // inline namespace PARITY_KERNEL_ISA

struct SumCall {
  ScalarType dtype = ScalarType::Float32;  // the input's; the output's is SumOp's out_t
  Geometry outer;  // over the output's elements; operands: the output, the input (its first summed element)
  Geometry inner;  // over the summed elements of one output; operand: the input
  void* out = nullptr;
  const void* in = nullptr;
  // CPU only, float16 and bfloat16 (VersionGate::ReducedFloatSumsAccumulateInFloat): each run of inner's
  // innermost dim is summed in float, rounded, and added into the output's running total in the element type,
  // rounded again, the runs in inner's order, as LibTorch's cascade_sum stores them before release 2.3.
  bool round_each_run = false;
};

inline namespace PARITY_KERNEL_ISA {

// One output's sum, its elements taken in row-major order.
template <typename T>
PARITY_HOST_DEVICE typename SumOp<T>::acc_t sum_in_order(const Geometry& inner, const T* x) {
  typename SumOp<T>::acc_t acc = 0;
  std::int64_t off[kMaxOperands];
  for (std::int64_t k = 0; k < inner.numel; ++k) {
    offsets(inner, k, off);
    acc = SumOp<T>::reduce(acc, x[off[0]]);
  }
  return acc;
}

// What a CUDA thread of a sum does: output `linear` of `outer`, its elements summed in order. The device launches
// one thread an output; host-backed cuda memory runs the same outputs in a loop.
template <typename T>
PARITY_HOST_DEVICE void sum_output(const Geometry& outer, const Geometry& inner, void* out, const void* in,
                                   std::int64_t linear) {
  std::int64_t off[kMaxOperands];
  offsets(outer, linear, off);
  const auto acc = sum_in_order(inner, static_cast<const T*>(in) + off[1]);
  static_cast<typename SumOp<T>::out_t*>(out)[off[0]] = SumOp<T>::project(acc);
}

}  // inline namespace PARITY_KERNEL_ISA
}  // namespace parity::impl::kernels
