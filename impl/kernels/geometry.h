// The index space a kernel walks: a shape and, per operand, the stride of each dim in elements (0 on a broadcast
// dim). Built once on the host (make_geometry coalesces dims that every operand walks as one, as TensorIterator
// does) and read by both executors: the CPU's walks it with an odometer, a CUDA thread finds its element's
// offsets from its linear index (offsets()).
#pragma once
#include <cstdint>

#include "impl/kernels/host_device.h"

namespace parity::impl::kernels {

inline constexpr int kMaxOperands = 4;  // the output first, then up to three inputs
// As many as a Layout may have (impl/tensor.cpp refuses more): every tensor impl can make, a kernel can walk.
inline constexpr int kMaxDims = 64;

struct Geometry {
  int ndim = 0;  // after coalescing; 0 for a single element
  int noperands = 0;
  std::int64_t numel = 1;
  // Only the first ndim entries (and noperands rows) are meaningful; left uninitialised, as small ops would
  // otherwise spend a measurable share of their time zeroing them.
  std::int64_t sizes[kMaxDims];
  std::int64_t strides[kMaxOperands][kMaxDims];  // row-major: dim ndim - 1 is the innermost
};

inline namespace PARITY_KERNEL_ISA {

// Offsets of the element at row-major position `linear` (0 <= linear < numel) of g, one per operand.
PARITY_HOST_DEVICE inline void offsets(const Geometry& g, std::int64_t linear, std::int64_t* off) {
  for (int k = 0; k < g.noperands; ++k) off[k] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const std::int64_t i = linear % g.sizes[d];
    linear /= g.sizes[d];
    for (int k = 0; k < g.noperands; ++k) off[k] += i * g.strides[k][d];
  }
}

// The geometry of `nops` operands walked over `shape` (`rank` dims; strides[k][d] in elements). Size-1 dims are
// dropped; dim d merges into d + 1 when every operand steps over d exactly as over a whole run of d + 1. Returns
// false when more than kMaxDims dims remain (the caller raises). An empty shape gives numel 0.
inline bool make_geometry(int rank, const std::int64_t* shape, int nops, const std::int64_t* const* strides,
                          Geometry& g) {
  g.ndim = 0;
  g.noperands = nops;
  g.numel = 1;
  for (int d = 0; d < rank; ++d) g.numel *= shape[d];
  if (g.numel == 0) return true;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    bool merge = g.ndim > 0;
    for (int k = 0; merge && k < nops; ++k) merge = g.strides[k][g.ndim - 1] == shape[d] * strides[k][d];
    if (merge) {
      g.sizes[g.ndim - 1] *= shape[d];
      for (int k = 0; k < nops; ++k) g.strides[k][g.ndim - 1] = strides[k][d];
      continue;
    }
    if (g.ndim == kMaxDims) return false;
    g.sizes[g.ndim] = shape[d];
    for (int k = 0; k < nops; ++k) g.strides[k][g.ndim] = strides[k][d];
    ++g.ndim;
  }
  return true;
}

}  // inline namespace PARITY_KERNEL_ISA
}  // namespace parity::impl::kernels
