// The random factories: LibTorch's rand_like, randn_like and randint_like are empty_like, then uniform_, normal_
// or random_ below autograd (version 0, no history). uniform_ and normal_ sample only floating dtypes, checking
// the dtype where their kernel dispatches; random_ samples every dtype, checking its bounds against the dtype's.
// The samples come from impl's own generator, as LibTorch's come from its default one; no program fixes either
// (the op table marks the values undefined), but they are of the distribution asked for.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>

#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
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

// The empty_like a sampler writes into.
Tensor fresh_like(const Tensor& x, MemoryFormat format, std::optional<Device> device) {
  Tensor t = empty_like(x, format);
  return device ? to(t, *device) : t;
}

// Writes a sample of `distribution` into each element of t.
template <typename Distribution>
Tensor sample_into(const Tensor& t, Distribution distribution) {
  std::vector<double> samples(static_cast<std::size_t>(t.numel()));
  for (double& s : samples) s = distribution(generator());
  const bool on_cuda = t.device().type == DeviceType::CUDA;
  Tensor host = on_cuda ? cuda::to_host(t) : t;
  ops::copy_kernel(host, reshape(from_values(samples, ScalarType::Float64), t.sizes()));
  if (on_cuda) cuda::write_back(t, host);
  return t;
}

// `empty_skips`: the sampler returns an empty tensor before it dispatches (normal_ since 2.x).
template <typename Distribution>
Tensor sampled_like(const Tensor& x, MemoryFormat format, std::optional<Device> device,
                    const ops::KernelDispatch& kernel, Distribution distribution, bool empty_skips = false) {
  Tensor t = fresh_like(x, format, device);
  if (empty_skips && t.numel() == 0) return t;
  ops::check_dispatch(t.device(), kernel, t.dtype());
  return sample_into(t, distribution);
}

// random_'s check_from_to_in_range for from = 0: the largest value `to - 1` may have in each dtype, named in the
// message as its C++ element type. Only bool, int32 and float16 have one below int64's.
void check_random_bound(std::int64_t high, ScalarType t) {
  PARITY_CHECK(0 < high, ErrorKind::Argument,
               "random_ expects 'from' to be less than 'to', but got from=0 >= to=" + std::to_string(high));
  std::int64_t largest = std::numeric_limits<std::int64_t>::max();
  const char* name = "";
  switch (t) {
    case ScalarType::Bool:
      largest = 1;
      name = "bool";
      break;
    case ScalarType::Int32:
      largest = std::numeric_limits<std::int32_t>::max();
      name = "int";
      break;
    case ScalarType::Float16:
      largest = 65504;
      name = "c10::Half";
      break;
    default: return;
  }
  PARITY_CHECK(high - 1 <= largest, ErrorKind::Argument, "to - 1 is out of bounds for " + std::string(name));
}

}  // namespace

Tensor rand_like(const Tensor& x, MemoryFormat format, std::optional<Device> device) {
  return sampled_like(x, format, device, {"check_uniform_bounds", kNotFloating, "check_uniform_bounds", kNotFloating},
                      std::uniform_real_distribution<double>(0.0, 1.0));
}

Tensor randint_like(const Tensor& x, std::int64_t high, MemoryFormat format, std::optional<Device> device) {
  Tensor t = fresh_like(x, format, device);
  check_random_bound(high, t.dtype());
  // As doubles: values are not compared, and every one of [0, high) that t's dtype holds exactly is one.
  return sample_into(t, std::uniform_int_distribution<std::int64_t>(0, high - 1));
}

Tensor randn_like(const Tensor& x, MemoryFormat format, std::optional<Device> device) {
  return sampled_like(x, format, device, {"normal_kernel_cpu", kNotFloating, "normal_kernel_cuda", kNotFloating},
                      std::normal_distribution<double>(0.0, 1.0), follows(VersionGate::NormalSkipsEmpty));
}

}  // namespace parity::impl
