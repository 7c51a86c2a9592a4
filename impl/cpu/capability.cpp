#include <cstdlib>
#include <string_view>

#include "impl/cpu/gemm.h"
#include "impl/cpu/kernels.h"

namespace parity::impl::cpu {

namespace {
bool use_avx2() {
  static const bool avx2 = [] {
    const char* asked = std::getenv("ATEN_CPU_CAPABILITY");
    if (asked && std::string_view(asked) == "default") return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return avx2;
}
// The products alone also have an AVX512 build: their bits do not depend on the width, and their speed does.
bool use_avx512() {
  static const bool avx512 = [] {
    const char* asked = std::getenv("ATEN_CPU_CAPABILITY");
    if (asked && std::string_view(asked) != "avx512") return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("fma") != 0;
  }();
  return avx512;
}

template <typename T>
void gemm_of(const kernels::MatmulGeometry& g, T* out, const T* a, const T* b, bool fused) {
  if (use_avx512()) avx512::gemm(g, out, a, b, fused);
  else if (use_avx2()) avx2::gemm(g, out, a, b, fused);
  else baseline::gemm(g, out, a, b, fused);
}
}  // namespace

void gemm(const kernels::MatmulGeometry& g, float* out, const float* a, const float* b, bool fused) {
  gemm_of(g, out, a, b, fused);
}
void gemm(const kernels::MatmulGeometry& g, double* out, const double* a, const double* b, bool fused) {
  gemm_of(g, out, a, b, fused);
}

std::string_view capability() { return use_avx2() ? "avx2" : "baseline"; }

void run_pointwise(const kernels::PointwiseCall& call) {
  if (use_avx2()) avx2::run_pointwise(call);
  else baseline::run_pointwise(call);
}

void run_sum(const kernels::SumCall& call) {
  if (use_avx2()) avx2::run_sum(call);
  else baseline::run_sum(call);
}

}  // namespace parity::impl::cpu
