// The strided walks of impl's CPU code: over a kernels::Geometry one innermost run at a time (for_each_run, what
// the executor's loops are built on), and over a shape one element at a time (for_each_offset, for the host code
// that reads or writes a tensor's elements outside a kernel).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "impl/dims.h"
#include "impl/error.h"
#include "impl/kernels/geometry.h"

namespace parity::impl::cpu {
inline namespace PARITY_KERNEL_ISA {

using kernels::Geometry;
using kernels::kMaxDims;
using kernels::kMaxOperands;

// Calls body(off, n, inner) for each innermost run of g: `off` holds each operand's offset of the run's first
// element, `n` its length, `inner` each operand's stride along it.
template <typename Body>
void for_each_run(const Geometry& g, Body&& body) {
  std::int64_t off[kMaxOperands] = {};
  if (g.numel == 0) return;
  if (g.ndim == 0) {
    const std::int64_t none[kMaxOperands] = {};
    body(off, std::int64_t{1}, none);
    return;
  }
  const int last = g.ndim - 1;
  std::int64_t inner[kMaxOperands] = {};
  for (int k = 0; k < g.noperands; ++k) inner[k] = g.strides[k][last];
  std::int64_t idx[kMaxDims];  // only the walked dims are set: zeroing all 64 costs a small op
  for (int d = 0; d < g.ndim; ++d) idx[d] = 0;
  while (true) {
    body(off, g.sizes[last], inner);
    int d = last;
    while (true) {
      if (d == 0) return;
      --d;
      if (++idx[d] < g.sizes[d]) {
        for (int k = 0; k < g.noperands; ++k) off[k] += g.strides[k][d];
        break;
      }
      for (int k = 0; k < g.noperands; ++k) off[k] -= g.strides[k][d] * (g.sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

// The geometry of `strides` (in elements; 0 on a broadcast dim) over `shape`, each operand's stride vector of
// shape's rank.
inline Geometry geometry_of(const Dims& shape,
                            std::initializer_list<const Dims*> strides) {
  const std::int64_t* st[kMaxOperands] = {};
  int n = 0;
  for (const auto* s : strides) {
    PARITY_INTERNAL_ASSERT(n < kMaxOperands && s->size() == shape.size(),
                           "a walk takes at most " + std::to_string(kMaxOperands) + " operands of the shape's rank");
    st[n++] = s->data();
  }
  Geometry g;
  PARITY_INTERNAL_ASSERT(kernels::make_geometry(static_cast<int>(shape.size()), shape.data(), n, st, g),
                         "more than " + std::to_string(kMaxDims) + " dims remain after coalescing");
  return g;
}

// Visits each index of `shape` in row-major order and passes the element offset of every operand.
template <typename F>
void for_each_offset(const Dims& shape,
                     std::initializer_list<const Dims*> strides, F&& f) {
  const Geometry g = geometry_of(shape, strides);
  for_each_run(g, [&](const std::int64_t* start, std::int64_t n, const std::int64_t* inner) {
    std::int64_t off[kMaxOperands];
    for (int k = 0; k < g.noperands; ++k) off[k] = start[k];
    for (std::int64_t i = 0; i < n; ++i) {
      f(static_cast<const std::int64_t*>(off));
      for (int k = 0; k < g.noperands; ++k) off[k] += inner[k];
    }
  });
}

}  // inline namespace PARITY_KERNEL_ISA
}  // namespace parity::impl::cpu
