// impl/kernels/ is the one source of impl's kernels for both devices: functors and per-element loops written once,
// run on the CPU by impl/cpu/'s executor and on a GPU by impl/cuda/'s launcher. Everything here compiles as C++17
// under nvcc as well as under the host compiler, so it uses no exceptions, no std:: function a device lacks and
// no impl type that is not itself marked PARITY_HOST_DEVICE.
#pragma once

#if defined(__CUDACC__)
#define PARITY_HOST_DEVICE __host__ __device__
#define PARITY_FORCE_INLINE __forceinline__
#else
#define PARITY_HOST_DEVICE
#define PARITY_FORCE_INLINE inline __attribute__((always_inline))
#endif

// Code in impl/kernels and in the CPU executor is compiled several times: once per CPU instruction set
// (impl/cpu/kernels.cpp), by nvcc, and in ordinary host code. Its functions live in an inline namespace named
// after the build, so that the linker never merges an AVX2 instantiation with a baseline one (a baseline CPU
// would then run AVX2 instructions). Data types (Geometry, the calls) stay outside it: every build shares them.
#if defined(__CUDACC__)
#define PARITY_KERNEL_ISA isa_cuda
#elif !defined(PARITY_KERNEL_ISA)
#define PARITY_KERNEL_ISA isa_host
#endif
