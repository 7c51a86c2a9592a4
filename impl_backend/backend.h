// impl as a judge::Backend: runs Programs on the in-house library (the oracle/ folder does the same for
// LibTorch). Outside impl/, since it depends on program/ and impl does not.
#pragma once
#include <memory>
#include <optional>

#include "impl/torch_version.h"
#include "judge/backend.h"

namespace parity::impl_backend {

using impl::TorchVersion;

// The LibTorch release this parity build is judged against (the build's oracle), which impl follows by default.
TorchVersion oracle_torch_version();

// impl following the behaviour of release `follows` where releases differ (impl/version_gates.def); by default
// that of this build's oracle.
std::unique_ptr<judge::Backend> make_impl_backend(std::optional<TorchVersion> follows = std::nullopt);

// impl judging impl (reports/oracle.h, `--oracle impl-cpu`): the same library, following the same release, with
// every cuda tensor in host memory (impl::cuda::HostBackedScope, for each session's life) and its kernels run by
// the CPU, and no planted fault (those break the impl side only). `follows` as make_impl_backend's.
std::unique_ptr<judge::Backend> make_impl_cpu_oracle(std::optional<TorchVersion> follows = std::nullopt);

// impl's CUDA devices (0 in a build without nvcc, or on a machine without a device). Initialises CUDA.
int cuda_device_count();
bool built_with_cuda();  // nvcc was found at configure time
// false once a sticky CUDA error broke this process's CUDA context (impl::cuda::context_usable)
bool cuda_context_usable();

}  // namespace parity::impl_backend
