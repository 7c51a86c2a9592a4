// The random factories: LibTorch's rand_like and randn_like are empty_like, then uniform_ or normal_ below
// autograd (version 0, no history), and those sample only floating dtypes, checking the dtype where their kernel
// dispatches. The samples come from impl's own generator, as LibTorch's come from its default one; no program
// fixes either (the op table marks the values undefined), but they are of the distribution asked for.
#include <optional>
#include <random>

#include "impl/cuda/cuda_runtime.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/version_gate.h"

namespace parity::impl {

namespace {

// Sampling exists for the floating dtypes; every other one raises where the sampler dispatches.
constexpr ops::DTypeSet kNotFloating = {ScalarType::Int64, ScalarType::Int32, ScalarType::Bool};

std::mt19937_64& generator() {
  static std::mt19937_64 g(0x9e3779b97f4a7c15ULL);
  return g;
}

// `empty_skips`: the sampler returns an empty tensor before it dispatches (normal_ since 2.x).
template <typename Distribution>
Tensor sampled_like(const Tensor& x, MemoryFormat format, std::optional<Device> device,
                    const ops::KernelDispatch& kernel, Distribution distribution, bool empty_skips = false) {
  Tensor t = empty_like(x, format);
  if (device) t = to(t, *device);
  if (empty_skips && t.numel() == 0) return t;
  ops::check_dispatch(t.device(), kernel, t.dtype());
  std::vector<double> samples(static_cast<std::size_t>(t.numel()));
  for (double& s : samples) s = distribution(generator());
  const bool on_cuda = t.device().type == DeviceType::CUDA;
  Tensor host = on_cuda ? cuda::to_host(t) : t;
  ops::copy_kernel(host, reshape(from_values(samples, ScalarType::Float64), t.sizes()));
  if (on_cuda) cuda::write_back(t, host);
  return t;
}

}  // namespace

Tensor rand_like(const Tensor& x, MemoryFormat format, std::optional<Device> device) {
  return sampled_like(x, format, device, {"check_uniform_bounds", kNotFloating, "check_uniform_bounds", kNotFloating},
                      std::uniform_real_distribution<double>(0.0, 1.0));
}

Tensor randn_like(const Tensor& x, MemoryFormat format, std::optional<Device> device) {
  return sampled_like(x, format, device, {"normal_kernel_cpu", kNotFloating, "normal_kernel_cuda", kNotFloating},
                      std::normal_distribution<double>(0.0, 1.0), follows(VersionGate::NormalSkipsEmpty));
}

}  // namespace parity::impl
