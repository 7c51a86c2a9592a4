// mm/bmm for both devices: how one output element sums its products (the Sum policies), and a tile of output
// elements summed over k. The CPU executor (impl/cpu/matmul.h; impl/cpu/gemm.h for float and double) runs tiles
// of MR x NR elements over packed operands; the CUDA launcher (impl/cuda/matmul.cu) runs 128 x 128 tiles staged
// through shared memory, 8 x 8 elements a thread. Either way each element sums its products alone, k ascending,
// with its policy's roundings, so both devices and every tiling give the same bits as the one-element-at-a-time
// loop impl models LibTorch by.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "impl/kernels/host_device.h"
#include "impl/reduced_float.h"

namespace parity::impl::kernels {

// acc * b + c, each operation rounded on its own: a fused multiply-add rounds once, and would change the bits.
// nvcc fuses a * b + c unless told not to (the _rn intrinsics never fuse); the host executor compiles with
// -ffp-contract=off (CMakeLists.txt).
template <typename T>
PARITY_HOST_DEVICE PARITY_FORCE_INLINE T add_product(T acc, T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fadd_rn(acc, __fmul_rn(a, b));
  else if constexpr (std::is_same_v<T, double>) return __dadd_rn(acc, __dmul_rn(a, b));
  else return acc + a * b;
#else
  return acc + a * b;
#endif
}

// Which roundings an element's sum of products takes, as the release and the kernel LibTorch runs decide them.
struct MatmulRounding {
  bool sum_16bit_in_float = false;  // float16, bfloat16: in float, rounded once (else rounded at every step)
  bool fused = false;               // float, double: each product added by a fused multiply-add (else rounded)
};

// mm/bmm's index space on either device: (batch, row, column) sizes and each operand's strides; a 2-d operand is
// one batch of stride 0.
struct MatmulGeometry {
  std::int64_t batches, rows, cols, inner;
  std::int64_t o[3], a[3], b[3];
};

// The geometry of out = a @ b (2-d operands) or out[n] = a[n] @ b[n] (3-d ones), from anything with dim(),
// sizes() and strides() (impl's Tensor; host code only).
template <class T>
MatmulGeometry matmul_geometry(const T& out, const T& a, const T& b) {
  auto strides = [](const T& t, std::int64_t (&s)[3]) {
    const bool batched = t.dim() == 3;
    s[0] = batched ? t.strides()[0] : 0;
    s[1] = t.strides()[batched ? 1 : 0];
    s[2] = t.strides()[batched ? 2 : 1];
  };
  MatmulGeometry g{};
  const bool batched = out.dim() == 3;
  g.batches = batched ? out.sizes()[0] : 1;
  g.rows = out.sizes()[batched ? 1 : 0];
  g.cols = out.sizes()[batched ? 2 : 1];
  g.inner = a.sizes().back();
  strides(out, g.o);
  strides(a, g.a);
  strides(b, g.b);
  return g;
}

// Each policy: Acc, the type summed in; zero(); step(acc, a, b), the next partial sum; finish(acc), the element.

// float and double, in their own type: each product and each partial sum rounded.
template <typename T>
struct SumInType {
  using Acc = T;
  PARITY_HOST_DEVICE static Acc zero() { return T(0); }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, T a, T b) { return add_product<T>(acc, a, b); }
  PARITY_HOST_DEVICE static T finish(Acc acc) { return acc; }
};

// float and double as a BLAS with fused multiply-adds sums them (VersionGate::BlasFusesMultiplyAdd): each
// product added to the partial sum and rounded once.
template <typename T>
struct SumFused {
  using Acc = T;
  PARITY_HOST_DEVICE static Acc zero() { return T(0); }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, T a, T b) { return std::fma(a, b, acc); }
  PARITY_HOST_DEVICE static T finish(Acc acc) { return acc; }
};

// A 16-bit float (Half, BFloat16: stored as its type, computed through float) as LibTorch 1.13 sums it: the
// product and every partial sum rounded to the element type. The accumulator is a float that always holds a
// value of T.
template <typename T>
struct SumRoundingEachStep {
  using Acc = float;
  PARITY_HOST_DEVICE static Acc zero() { return 0.0f; }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, T a, T b) {
    const float product = static_cast<float>(T(static_cast<float>(a) * static_cast<float>(b)));
    return static_cast<float>(T(acc + product));
  }
  PARITY_HOST_DEVICE static T finish(Acc acc) { return T(acc); }
};

// A 16-bit float as LibTorch 2.x sums it (VersionGate::ProductsAccumulateInFloat): in float, rounded once.
template <typename T>
struct SumInFloat {
  using Acc = float;
  PARITY_HOST_DEVICE static Acc zero() { return 0.0f; }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, T a, T b) { return acc + static_cast<float>(a) * static_cast<float>(b); }
  PARITY_HOST_DEVICE static T finish(Acc acc) { return T(acc); }
};

// Integers wrap as two's complement: summed in the unsigned type of at least their width (no signed overflow, the
// same low bits), converted back at the end.
template <typename T>
struct SumWrapping {
  using Acc = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  PARITY_HOST_DEVICE static Acc zero() { return 0; }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, T a, T b) {
    return acc + static_cast<Acc>(a) * static_cast<Acc>(b);
  }
  PARITY_HOST_DEVICE static T finish(Acc acc) { return static_cast<T>(acc); }
};

// bool: whether any product is true.
struct SumAny {
  using Acc = bool;
  PARITY_HOST_DEVICE static Acc zero() { return false; }
  PARITY_HOST_DEVICE PARITY_FORCE_INLINE static Acc step(Acc acc, bool a, bool b) { return acc | (a & b); }
  PARITY_HOST_DEVICE static bool finish(Acc acc) { return acc; }
};

// The operands of a tile: a(i, k) = a[i * a_row + k * a_k], b(k, j) = b[k * b_k + j]: a tile's columns are
// adjacent in b (packed on the CPU; a 1-column tile on the device reads b in place).
template <typename T>
struct TileOperands {
  const T* a;
  std::int64_t a_row, a_k;
  const T* b;
  std::int64_t b_k;
};

// acc[i][j] (i < MR, j < NR) summed over k = 0 .. inner-1 in ascending order. The j loop is innermost, over
// independent accumulators and adjacent b elements, so that the host compiler vectorizes it.
template <class Sum, int MR, int NR, typename T>
PARITY_HOST_DEVICE PARITY_FORCE_INLINE void sum_tile(std::int64_t inner, const TileOperands<T>& o,
                                                     typename Sum::Acc (&acc)[MR][NR]) {
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = Sum::zero();
  for (std::int64_t k = 0; k < inner; ++k) {
    const T* b = o.b + k * o.b_k;
    for (int i = 0; i < MR; ++i) {
      const T a = o.a[i * o.a_row + k * o.a_k];
      for (int j = 0; j < NR; ++j) acc[i][j] = Sum::step(acc[i][j], a, b[j]);
    }
  }
}

}  // namespace parity::impl::kernels
