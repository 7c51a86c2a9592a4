// The CPU's entry points into impl/kernels. Each runs the kernel source's functors through the CPU executor,
// compiled once per instruction set (impl/cpu/kernels.cpp, built by CMake as `baseline` and as `avx2`); the first
// call picks the widest one this CPU runs. Results do not depend on the pick: elementwise functors round per
// element, and the sum's order of partial sums is fixed by the executor, not by the vector width.
#pragma once
#include <string_view>

#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"

namespace parity::impl::cpu {

void run_pointwise(const kernels::PointwiseCall& call);
void run_sum(const kernels::SumCall& call);

// The instruction set the entry points run ("avx2" or "baseline"); ATEN_CPU_CAPABILITY=default asks for
// baseline, as it asks LibTorch.
std::string_view capability();

// One build of the entry points per instruction set (namespaces named after PARITY_CPU_CAPABILITY).
namespace baseline {
void run_pointwise(const kernels::PointwiseCall& call);
void run_sum(const kernels::SumCall& call);
}  // namespace baseline
namespace avx2 {
void run_pointwise(const kernels::PointwiseCall& call);
void run_sum(const kernels::SumCall& call);
}  // namespace avx2

}  // namespace parity::impl::cpu
