#include <cstdlib>
#include <string_view>

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
}  // namespace

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
