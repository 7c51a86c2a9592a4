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
