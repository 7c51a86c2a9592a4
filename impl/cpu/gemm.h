// The CPU's float and double matrix products at the machine's speed: the sums of impl/kernels/matmul.h (each
// element's products taken k ascending, each added by a fused multiply-add or rounded on its own, as
// MatmulRounding::fused says) in register tiles over packed, cache-sized blocks of the operands. Compiled once
// per instruction set (baseline, avx2, avx512: CMakeLists.txt); `gemm` runs the widest this CPU has. The bits
// depend on neither the pick nor the blocking: a block of k resumes each element's sum from the value the last
// block stored, which is the sum's own type.
#pragma once
#include "impl/kernels/matmul.h"

namespace parity::impl::cpu {

// out[n] = a[n] @ b[n] over g (any strides; out does not overlap a or b), g.inner > 0.
void gemm(const kernels::MatmulGeometry& g, float* out, const float* a, const float* b, bool fused);
void gemm(const kernels::MatmulGeometry& g, double* out, const double* a, const double* b, bool fused);

// One build per instruction set (namespaces named after PARITY_CPU_CAPABILITY).
#define PARITY_GEMM_ENTRY_POINTS                                                                               \
  void gemm(const kernels::MatmulGeometry& g, float* out, const float* a, const float* b, bool fused);       \
  void gemm(const kernels::MatmulGeometry& g, double* out, const double* a, const double* b, bool fused);
namespace baseline {
PARITY_GEMM_ENTRY_POINTS
}
namespace avx2 {
PARITY_GEMM_ENTRY_POINTS
}
namespace avx512 {
PARITY_GEMM_ENTRY_POINTS
}
#undef PARITY_GEMM_ENTRY_POINTS

}  // namespace parity::impl::cpu
