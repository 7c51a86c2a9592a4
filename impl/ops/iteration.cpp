#include "impl/ops/iteration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string_view>

#include "impl/cpu/kernels.h"
#include "impl/cpu/loops.h"
#include "impl/cpu/matmul.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/ops/out_argument.h"
#include "impl/version_gate.h"

namespace parity::impl::ops {

namespace {
ScalarType wrapped_type(ScalarType t) { return is_floating(t) ? kDefaultFloat : t; }

// c10's combine_categories: the lower-priority class matters only when it is of a higher category.
ScalarType combine(ScalarType higher, ScalarType lower) {
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

struct Promoted {
  bool any = false;
  ScalarType type = ScalarType::Bool;
  void add(ScalarType t) {
    type = any ? promote_types(type, t) : t;
    any = true;
  }
};
}  // namespace

namespace {
ScalarType result_type(std::initializer_list<const Operand*> operands, std::optional<ScalarType> wrapped_scalar) {
  Promoted dim, zero, wrapped;
  for (const Operand* o : operands) {
    if (o->wrapped) wrapped.add(wrapped_type(o->tensor.dtype()));
    else if (o->tensor.dim() == 0) zero.add(o->tensor.dtype());
    else dim.add(o->tensor.dtype());
  }
  if (wrapped_scalar) wrapped.add(wrapped_type(*wrapped_scalar));
  Promoted low = zero;
  if (wrapped.any) low = Promoted{true, zero.any ? combine(zero.type, wrapped.type) : wrapped.type};
  if (!dim.any) return low.type;
  return low.any ? combine(dim.type, low.type) : dim.type;
}
}  // namespace

ScalarType result_type(std::initializer_list<const Operand*> operands) { return result_type(operands, std::nullopt); }

ScalarType result_type(std::initializer_list<const Operand*> operands, Scalar wrapped) {
  return result_type(operands, wrapped_dtype(wrapped));
}

ScalarType wrapped_dtype(Scalar s) {
  switch (s.kind) {
    case Scalar::Kind::Int: return ScalarType::Int64;
    case Scalar::Kind::Bool: return ScalarType::Bool;
    case Scalar::Kind::Float: return ScalarType::Float64;
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

Tensor wrap_scalar(Scalar s) {
  Tensor out = Tensor::allocate(Layout{}, wrapped_dtype(s));
  fill_kernel(out, s.value);
  return out;
}

Tensor wrap_scalar(Scalar s, ScalarType dtype) {
  Tensor out = Tensor::allocate_uninitialized(Layout{}, dtype);
  // fill_kernel's element conversion into the wrapped dtype, then copy_kernel's into `dtype`: the same functions.
  dispatch(wrapped_dtype(s), [&](auto wrapped) {
    using W = decltype(wrapped);
    dispatch(dtype, [&](auto target) {
      using D = decltype(target);
      *out.data<D>() = kernels::CopyFn<D, W>{}(kernels::element<W>(s.value));
    });
  });
  return out;
}

Layout elementwise_layout(const Dims& shape, std::initializer_list<const Layout*> inputs) {
  return elementwise_layout(shape, std::span<const Layout* const>(inputs.begin(), inputs.size()));
}

Layout elementwise_layout(const Dims& shape, std::span<const Layout* const> inputs) {
  bool same_shape = true, has_scalars = false, has_tensors = false;
  for (const Layout* l : inputs) {
    (l->sizes.empty() ? has_scalars : has_tensors) = true;
    if (l->sizes != shape) same_shape = false;
  }
  if (has_scalars && has_tensors) same_shape = false;
  if (same_shape) {
    bool contiguous = true, channels_last = true, dense = true;
    for (const Layout* l : inputs) {
      contiguous &= l->is_contiguous();
      channels_last &= l->is_contiguous(MemoryFormat::ChannelsLast);
      dense &= l->is_non_overlapping_and_dense();
    }
    if (contiguous) return Layout::dense(shape);
    if (channels_last) return Layout::dense(shape, MemoryFormat::ChannelsLast);
    if (dense) {
      bool equal = true;
      for (const Layout* l : inputs) equal &= l->strides == inputs.back()->strides;
      if (equal) return Layout{shape, inputs.back()->strides, 0};
    }
  }
  const std::size_t ndim = shape.size();
  // Per-input strides after broadcasting (0 where broadcast), then TensorIterator's insertion sort of dims.
  // On the stack for the usual few inputs: every elementwise op comes here, and small ops are allocation-bound.
  Dims st_small[3];
  std::vector<Dims> st_heap(inputs.size() > 3 ? inputs.size() : 0);
  const std::span<Dims> st(inputs.size() > 3 ? st_heap.data() : st_small, inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Layout* l = inputs[k];
    Dims& s = st[k];
    s.assign(ndim, 0);
    std::size_t off = ndim - l->sizes.size();
    for (std::size_t i = 0; i < l->sizes.size(); ++i)
      s[off + i] = (l->sizes[i] == 1 && shape[off + i] != 1) ? 0 : l->strides[i];
  }
  std::vector<std::size_t> perm = sort_dims(ndim, [&](std::size_t d0, std::size_t d1) {
    for (const Dims& s : st) {
      std::int64_t s0 = s[d0], s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;  // broadcast in this operand: ask the next one
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  });
  bool inverted = true;
  for (std::size_t j = 0; j < ndim; ++j) inverted &= perm[j] == ndim - j - 1;
  if (inverted) return Layout::dense(shape);
  Dims strides(ndim);
  std::int64_t next = 1;
  for (std::size_t j = 0; j < ndim; ++j) {
    strides[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return Layout{shape, strides, 0};
}

Device common_device(const Tensor* output, std::initializer_list<const Tensor*> inputs, bool allow_cpu_scalars,
                     std::optional<ScalarType> cast_to_output) {
  Device common;
  auto take = [&](const Tensor* t) {
    if (common.type == DeviceType::CPU && t->device().type != DeviceType::CPU) common = t->device();
  };
  if (output) take(output);
  for (const Tensor* t : inputs) take(t);
  auto check = [&](const Tensor* t) {
    PARITY_CHECK(t->device() == common, ErrorKind::Device,
                 "Expected all tensors to be on the same device, but found at least two devices, " + common.str() +
                     " and " + t->device().str() + "!");
  };
  if (output) check(output);
  if (output && cast_to_output) check_out_dtype(*output, *cast_to_output, OutDtype::CastSafely);
  int cpu_scalars = 0;
  for (const Tensor* t : inputs) {
    if (common.type != DeviceType::CPU && allow_cpu_scalars && t->dim() == 0 && t->device().type == DeviceType::CPU) {
      PARITY_CHECK(cpu_scalars++ < 1, ErrorKind::Device, "Trying to pass too many CPU scalars to non-CPU kernel!");
      continue;
    }
    check(t);
  }
  return common;
}

Device wrapper_device(const char* wrapper, std::initializer_list<WrapperArgument> arguments) {
  std::optional<Device> common;
  for (const WrapperArgument& a : arguments) {
    const Device d = a.tensor->device();
    if (!common) {
      common = d;
      continue;
    }
    if (d == *common) continue;
    // Two devices, so one is cuda: the CUDA kernel's wrapper is the one that checks.
    if (follows(VersionGate::WrapperDeviceMessageNamesArgument))
      fail(ErrorKind::Device, "Expected all tensors to be on the same device, but got " + std::string(a.name) +
                                  " is on " + d.str() + ", different from other tensors on " + common->str() +
                                  " (when checking argument in method wrapper_CUDA_" + wrapper + ")");
    fail(ErrorKind::Device, "Expected all tensors to be on the same device, but found at least two devices, " +
                                common->str() + " and " + d.str() + "! (when checking argument for argument " +
                                a.name + " in method wrapper_" + wrapper + ")");
  }
  return common.value_or(Device{});
}

Tensor kernel_operand(Tensor t, Device device) {
  if (t.device() == device) return t;
  Tensor out = Tensor::allocate_uninitialized(t.layout().preserved(), t.dtype(), device);
  copy_kernel(out, t);
  return out;
}

void require_cpu(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    PARITY_CHECK(t->device().type == DeviceType::CPU, ErrorKind::Device,
                 "impl's host loops got a tensor on " + t->device().str() + "; this op runs on the CPU only");
}

void check_dispatch(Device device, const KernelDispatch& kernel, ScalarType t) {
  const bool cpu = device.type == DeviceType::CPU;
  const bool missing = cpu ? kernel.cpu_missing.contains(t) &&
                                 !(t == ScalarType::Float16 && follows(VersionGate::CpuKernelsTakeHalf))
                           : kernel.cuda_missing.contains(t);
  if (missing)
    fail(ErrorKind::DType,
         "\"" + std::string(cpu ? kernel.cpu_kernel : kernel.cuda_kernel) + "\" not implemented for '" +
             std::string(type_name(t)) + "'",
         dtype_refusal_class());
}

bool fits_integral(double value, std::int64_t lowest, std::int64_t max) {
  const auto top = static_cast<double>(max);  // int64's rounds up to 2^63; int32's is exact
  if (std::isnan(value) || value < static_cast<double>(lowest)) return false;
  return follows(VersionGate::FloatToIntegralRangeIsExact) ? value < top + 1.0 : value <= top;
}

// c10::checked_convert, named as Scalar::to<T> names the type.
void check_scalar_fits(double value, ScalarType dtype) {
  const char* name = nullptr;
  bool fits = true;
  switch (dtype) {
    case ScalarType::Bool:
    case ScalarType::Float64: return;
    case ScalarType::Int32:
      name = "int";
      fits = fits_integral(value, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
      break;
    case ScalarType::Int64:
      name = "int64_t";
      fits = fits_integral(value, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
      break;
    case ScalarType::Float16:
      name = follows(VersionGate::ScalarOverflowNamesC10Types) ? "c10::Half" : "at::Half";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= 65504.0;
      break;
    case ScalarType::BFloat16:
      name = follows(VersionGate::ScalarOverflowNamesC10Types) ? "c10::BFloat16" : "at::BFloat16";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= 3.3895313892515355e38;
      break;
    case ScalarType::Float32:
      name = "float";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= std::numeric_limits<float>::max();
      break;
  }
  // c10's report_overflow throws a plain std::runtime_error, in every release.
  PARITY_CHECK_AS(fits, ErrorKind::Argument, RuntimeError,
                  "value cannot be converted to type " + std::string(name) + " without overflow");
}

void check_fill_value(double value, const Tensor& out) {
  const bool reduced = out.dtype() == ScalarType::Float16 || out.dtype() == ScalarType::BFloat16;
  const bool fast_path = out.numel() == 1 && out.device().type == DeviceType::CPU;
  if (reduced && fast_path && follows(VersionGate::OneElementFillOfReducedFloatsUnchecked)) return;
  check_scalar_fits(value, out.dtype());
}

std::byte* element0(const Tensor& t) {
  return static_cast<std::byte*>(t.storage().data()) + t.offset() * static_cast<std::int64_t>(element_size(t.dtype()));
}

namespace {
// A call of `kind` computing in `dtype`, writing `out` from `inputs` broadcast to out's shape.
kernels::PointwiseCall pointwise_call(kernels::Pointwise kind, ScalarType dtype, const Tensor& out,
                                      std::initializer_list<const Tensor*> inputs) {
  kernels::PointwiseCall c;
  c.kind = kind;
  c.dtype = dtype;
  c.cuda = out.device().type == DeviceType::CUDA;
  const Dims& shape = out.sizes();
  // Broadcast strides on the stack: a small op's time goes mostly to allocations.
  constexpr std::size_t kMaxRank = 64;
  PARITY_INTERNAL_ASSERT(shape.size() <= kMaxRank, "a kernel's output has at most 64 dims");
  std::int64_t strides[kernels::kMaxOperands][kMaxRank];
  const std::int64_t* st[kernels::kMaxOperands] = {out.strides().data()};
  c.data[0] = element0(out);
  int n = 1;
  for (const Tensor* t : inputs) {
    PARITY_INTERNAL_ASSERT(n < kernels::kMaxOperands && t->device() == out.device(),
                           "a kernel takes at most 3 inputs, on its output's device (the ops check devices first)");
    // One executor runs the call: cuda operands are all device memory or all host-backed (a host-backed tensor is
    // used under the cuda::HostBackedScope it was made in, impl/cuda/cuda_runtime.h).
    PARITY_INTERNAL_ASSERT(out.device().type == DeviceType::CPU ||
                               t->storage().host_addressable() == out.storage().host_addressable(),
                           "a cuda kernel's operands are in memory of two kinds (device and host-backed)");
    const std::size_t lead = shape.size() - t->sizes().size();
    for (std::size_t d = 0; d < shape.size(); ++d)
      strides[n][d] = d < lead || t->sizes()[d - lead] == 1 ? 0 : t->strides()[d - lead];
    st[n] = strides[n];
    c.data[n] = element0(*t);
    ++n;
  }
  PARITY_INTERNAL_ASSERT(kernels::make_geometry(static_cast<int>(shape.size()), shape.data(), n, st, c.geometry),
                         "more than " + std::to_string(kernels::kMaxDims) + " dims remain after coalescing");
  return c;
}

// Runs a call on its output's device: the kernel source is the same, only the executor differs.
void launch(const kernels::PointwiseCall& c, const Tensor& out) {
  switch (out.device().type) {
    case DeviceType::CPU: return cpu::run_pointwise(c);
    case DeviceType::CUDA: return cuda::run_pointwise(c, out);
  }
}
}  // namespace

Dims broadcast_strides(const Tensor& t, const Dims& shape) {
  Dims s(shape.size(), 0);
  std::size_t off = shape.size() - t.sizes().size();
  for (std::size_t i = 0; i < t.sizes().size(); ++i)
    s[off + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

void copy_kernel(const Tensor& dst, const Tensor& src) {
  if (src.device() != dst.device()) {
    // copy_ across devices: the source's storage crosses as it is (a transfer), then the same-device copy converts,
    // broadcasts and lays it out on the destination's side.
    const Tensor staged = dst.device().type == DeviceType::CUDA ? cuda::to_device(src, dst.device().index)
                                                                 : cuda::to_host(src);
    return copy_kernel(dst, staged);
  }
  auto c = pointwise_call(kernels::Pointwise::Copy, dst.dtype(), dst, {&src});
  c.src_dtype = src.dtype();
  launch(c, dst);
}

void binary_kernel(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  PARITY_INTERNAL_ASSERT(op != BinaryOp::Div || is_floating(out.dtype()) , "true division has a floating output");
  auto c = pointwise_call(kernels::Pointwise::Binary, out.dtype(), out, {&a, &b});
  c.binary = op;
  launch(c, out);
}

void where_kernel(const Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b) {
  PARITY_INTERNAL_ASSERT(condition.dtype() == ScalarType::Bool && a.dtype() == out.dtype() && b.dtype() == out.dtype(),
                         "where_kernel's dtypes");
  launch(pointwise_call(kernels::Pointwise::Where, out.dtype(), out, {&condition, &a, &b}), out);
}

void compare_kernel(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  PARITY_INTERNAL_ASSERT(out.dtype() == ScalarType::Bool && a.dtype() == b.dtype(), "compare_kernel's dtypes");
  auto c = pointwise_call(kernels::Pointwise::Compare, a.dtype(), out, {&a, &b});
  c.compare = op;
  launch(c, out);
}

void unary_kernel(UnaryOp op, const Tensor& out, const Tensor& x) {
  PARITY_INTERNAL_ASSERT(x.dtype() == out.dtype(), "unary_kernel reads x as out's dtype");
  auto c = pointwise_call(kernels::Pointwise::Unary, out.dtype(), out, {&x});
  c.unary = op;
  launch(c, out);
}

void clamp_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  PARITY_INTERNAL_ASSERT(x.dtype() == out.dtype(), "clamp_kernel reads x as out's dtype");
  auto c = pointwise_call(kernels::Pointwise::Clamp, out.dtype(), out, {&x});
  c.has_a = lo.has_value();
  c.has_b = hi.has_value();
  c.a = lo.value_or(0);
  c.b = hi.value_or(0);
  launch(c, out);
}

void clamp_mask_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi,
                       bool bounds_included) {
  PARITY_INTERNAL_ASSERT(out.dtype() == ScalarType::Bool && out.sizes() == x.sizes(), "clamp_mask_kernel writes a bool mask of x's shape");
  auto c = pointwise_call(kernels::Pointwise::ClampMask, x.dtype(), out, {&x});
  c.has_a = lo.has_value();
  c.has_b = hi.has_value();
  c.a = lo.value_or(0);
  c.b = hi.value_or(0);
  c.flag = bounds_included;
  launch(c, out);
}

void result_backward_kernel(ResultBackward op, const Tensor& out, const Tensor& grad, const Tensor& y) {
  PARITY_INTERNAL_ASSERT(grad.dtype() == out.dtype() && y.dtype() == out.dtype(), "result_backward_kernel's dtypes");
  auto c = pointwise_call(kernels::Pointwise::ResultBackward, out.dtype(), out, {&grad, &y});
  c.result_backward = op;
  launch(c, out);
}

void threshold_backward_kernel(const Tensor& out, const Tensor& grad, const Tensor& x, double threshold) {
  PARITY_INTERNAL_ASSERT(grad.dtype() == out.dtype() && x.dtype() == out.dtype(), "threshold_backward_kernel's dtypes");
  auto c = pointwise_call(kernels::Pointwise::ThresholdBackward, out.dtype(), out, {&grad, &x});
  c.a = threshold;
  launch(c, out);
}

void matmul_kernel(const Tensor& out, const Tensor& a, const Tensor& b, ProductKernel kernel) {
  // One kernel source for both devices (impl/kernels/matmul.h): each output element sums its products alone, k
  // ascending. 1.13: in the element type, each product and sum stored in it: for bfloat16 that rounds at every
  // step, as LibTorch 1.13's small bmm does. Its mm goes through gemm variants that round elsewhere (per operand
  // transposition), which impl does not model: the generator makes no bfloat16 products (program/op_table.h,
  // kProductTypes). 2.x accumulates a 16-bit product in float, in order, and rounds once
  // (VersionGate::ProductsAccumulateInFloat).
  // The CUDA launcher takes the CPU's roundings too, so that impl's two devices agree bit for bit (cuBLAS fuses in
  // every release: LibTorch-CUDA is judged by the tolerances).
  const kernels::MatmulRounding rounding{
      .sum_16bit_in_float = follows(VersionGate::ProductsAccumulateInFloat),
      .fused = kernel == ProductKernel::Blas && follows(VersionGate::BlasFusesMultiplyAdd)};
  if (out.device().type == DeviceType::CUDA && a.device().type == DeviceType::CUDA &&
      b.device().type == DeviceType::CUDA) {
    cuda::matmul(out, a, b, rounding);
    return;
  }
  require_cpu({&out, &a, &b});
  cpu::matmul(out, a, b, rounding);
}

namespace {
// The vector registers of the kernels LibTorch runs: AVX2's 32 bytes, or AVX512's 64 where 2.x finds the CPU has
// it (VersionGate::Avx512Kernels; 1.13 runs AVX2 kernels on such CPUs too). ATEN_CPU_CAPABILITY=avx2 (or
// default) keeps 2.x on AVX2, as it tells LibTorch.
constexpr std::int64_t kAvx2VectorBytes = 32;

std::int64_t vector_bytes() {
  if (!follows(VersionGate::Avx512Kernels)) return kAvx2VectorBytes;
  static const bool avx512 = [] {
    const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
    if (capability && std::string_view(capability) != "avx512") return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }();
  return avx512 ? 2 * kAvx2VectorBytes : kAvx2VectorBytes;
}

// cpu_kernel_vec runs a dense operand as one loop in memory order: its vectorised part, blocks of two vectors
// (32 bfloat16 or 16 float elements under AVX2, twice that under AVX512), then its scalar part (the rest, and
// every element of a strided operand). The offsets below this one in out are the vectorised part.
std::int64_t vectorised_part(const Tensor& out, const Tensor& x) {
  // TensorIterator ignores size-1 dims, whose strides may differ.
  bool one_loop = out.is_non_overlapping_and_dense() && x.is_non_overlapping_and_dense();
  for (std::size_t d = 0; one_loop && d < out.sizes().size(); ++d)
    one_loop = out.sizes()[d] == 1 || out.strides()[d] == x.strides()[d];
  const std::int64_t block = 2 * vector_bytes() / static_cast<std::int64_t>(element_size(out.dtype()));
  return one_loop ? out.numel() / block * block : 0;
}

// rsqrt_kernel (pow's -0.5) for bfloat16: the vectorised part divides in float and rounds once; the scalar part
// divides by c10's bfloat16 sqrt, so the root is rounded before the quotient.
void rsqrt_bfloat16(const Tensor& out, const Tensor& x) {
  const std::int64_t vectorised = vectorised_part(out, x);
  BFloat16* o = out.data<BFloat16>();
  const BFloat16* in = x.data<BFloat16>();
  cpu::for_each_offset(out.sizes(), {&out.strides(), &x.strides()}, [&](const std::int64_t* off) {
    const float root = std::sqrt(static_cast<float>(in[off[1]]));
    o[off[0]] = off[0] < vectorised ? BFloat16(1.0f / root) : BFloat16(1.0f / static_cast<float>(BFloat16(root)));
  });
}

// pow_tensor_scalar_optimized_kernel<float, double> for an exponent a float cannot hold (2^31 - 1): the scalar
// part raises the element to the double exponent (std::pow(float, double)), the vectorised part to the exponent
// Vectorized<float> holds, rounded to float, so that (-1)^(2^31 - 1) is -1 in the one and 1 in the other.
void pow_float_inexact_exponent(const Tensor& out, const Tensor& x, double e) {
  const std::int64_t vectorised = vectorised_part(out, x);
  float* o = out.data<float>();
  const float* in = x.data<float>();
  const float rounded = static_cast<float>(e);
  cpu::for_each_offset(out.sizes(), {&out.strides(), &x.strides()}, [&](const std::int64_t* off) {
    const float v = in[off[1]];
    o[off[0]] = off[0] < vectorised ? std::pow(v, rounded) : static_cast<float>(std::pow(static_cast<double>(v), e));
  });
}
}  // namespace

void pow_kernel(const Tensor& out, const Tensor& x, double e) {
  PARITY_INTERNAL_ASSERT(x.dtype() == out.dtype(), "pow_kernel reads x as out's dtype");
  if (out.dtype() == ScalarType::BFloat16 && e == -0.5 && out.device().type == DeviceType::CPU) {
    rsqrt_bfloat16(out, x);
    return;
  }
  if (out.dtype() == ScalarType::Float32 && static_cast<double>(static_cast<float>(e)) != e && std::isfinite(e) &&
      out.device().type == DeviceType::CPU) {
    pow_float_inexact_exponent(out, x, e);
    return;
  }
  auto c = pointwise_call(kernels::Pointwise::Pow, out.dtype(), out, {&x});
  c.a = e;
  launch(c, out);
}

void fill_kernel(const Tensor& out, double value) {
  auto c = pointwise_call(kernels::Pointwise::Fill, out.dtype(), out, {});
  c.a = value;
  launch(c, out);
}

// ATen's CPU arange_kernel runs cpu_serial_kernel_vec under AVX2 in every release (it is registered without
// AVX512), single-threaded here (the oracle runs one thread, so one loop from index 0). Its vectorised part,
// blocks of two vectors, makes each vector with Vectorized::arange(base, step): the vector's first index is
// rounded to the element type, and each lane adds its offset to that in the accumulate type and rounds again.
// The scalar rest, and CUDA's kernel, round start + step * index once. Only float16 and bfloat16 (and float past
// 2^24) tell the two apart: as float16, 32785 is 32768 on the CPU (the base 32784 rounds down) and 32800 on CUDA.
void arange_kernel(const Tensor& out, DeviceType device) {
  PARITY_INTERNAL_ASSERT(out.device().type == DeviceType::CPU && out.is_contiguous(),
                         "arange_kernel writes a contiguous tensor in host memory");
  const std::int64_t n = out.numel();
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      PARITY_INTERNAL_ASSERT(false, "arange_kernel has no bool kernel: the dispatch check refuses it");
    } else {
      // at::acc_type<T, /*is_cuda=*/false>.
      using Acc = std::conditional_t<!is_floating_v<T>, std::int64_t,
                                     std::conditional_t<sizeof(T) == 2, float, double>>;
      const std::int64_t lanes = kAvx2VectorBytes / static_cast<std::int64_t>(sizeof(T));
      const std::int64_t vectorised = device == DeviceType::CPU ? n / (2 * lanes) * (2 * lanes) : 0;
      T* o = out.data<T>();
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t first = i < vectorised ? i / lanes * lanes : i;
        const T base = static_cast<T>(static_cast<Acc>(first));
        o[i] = static_cast<T>(static_cast<Acc>(base) + static_cast<Acc>(i - first));
      }
    }
  });
}

void masked_fill_kernel(const Tensor& out, const Tensor& mask, double value) {
  PARITY_INTERNAL_ASSERT(mask.dtype() == ScalarType::Bool, "masked_fill_kernel's mask dtype");
  auto c = pointwise_call(kernels::Pointwise::MaskedFill, out.dtype(), out, {&mask, &out});
  c.a = value;
  launch(c, out);
}

void addcmul_kernel(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, double value) {
  PARITY_INTERNAL_ASSERT(self.dtype() == out.dtype() && t1.dtype() == out.dtype() && t2.dtype() == out.dtype(),
                         "addcmul_kernel's dtypes");
  PARITY_INTERNAL_ASSERT(out.dtype() != ScalarType::Bool, "addcmul_kernel on bool (the op refuses it)");
  auto c = pointwise_call(kernels::Pointwise::Addcmul, out.dtype(), out, {&self, &t1, &t2});
  c.a = value;
  launch(c, out);
}

namespace {
// Before VersionGate::ReducedFloatSumsAccumulateInFloat: the groups LibTorch's CPU TensorIterator walks a
// reduction's reduced dims in, fastest first, where it keeps two or more (none otherwise; then one store per
// output rounds once, as a float sum does). reorder_dimensions puts the reduced dims (the output's stride 0)
// before the kept ones, ordered by the input's strides; coalesce_dimensions merges neighbours that step as one
// run. `out_strides`: the output as TensorIterator sees it, 0 on every reduced dim of size > 1 (broadcast) and,
// without keepdim, on those of size 1 too (review_reduce_result).
struct ReducedGroup {
  std::int64_t size, stride;
};
std::vector<ReducedGroup> separately_stored_groups(const Tensor& x, const Dims& out_strides) {
  const Dims& shape = x.sizes();
  const Dims& in = x.strides();
  const std::size_t n = shape.size();
  std::vector<std::size_t> perm = sort_dims(n, [&](std::size_t d0, std::size_t d1) {
    const std::int64_t o0 = out_strides[d0], o1 = out_strides[d1];
    if ((o0 == 0) != (o1 == 0)) return o1 == 0 ? 1 : -1;  // reduced dims first
    for (const Dims* st : {&out_strides, &in}) {
      const std::int64_t s0 = (*st)[d0], s1 = (*st)[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  });
  std::vector<std::int64_t> size(n), so(n), si(n);
  for (std::size_t j = 0; j < n; ++j) size[j] = shape[perm[j]], so[j] = out_strides[perm[j]], si[j] = in[perm[j]];
  std::size_t prev = 0;
  for (std::size_t d = 1; d < n; ++d) {
    if (size[prev] == 1 || size[d] == 1 || (size[prev] * so[prev] == so[d] && size[prev] * si[prev] == si[d])) {
      if (size[prev] == 1) so[prev] = so[d], si[prev] = si[d];
      size[prev] *= size[d];
    } else if (++prev != d) {
      size[prev] = size[d], so[prev] = so[d], si[prev] = si[d];
    }
  }
  std::vector<ReducedGroup> groups;
  for (std::size_t j = 0; n > 0 && j <= prev && so[j] == 0; ++j) groups.push_back({size[j], si[j]});
  if (groups.size() < 2) groups.clear();
  return groups;
}
}  // namespace

void sum_kernel(const Tensor& out, const Tensor& x, const std::vector<bool>& reduce, bool keepdim) {
  PARITY_INTERNAL_ASSERT(
      out.device() == x.device() && out.storage().host_addressable() == x.storage().host_addressable(),
      "sum_kernel within one device and one kind of memory");
  PARITY_INTERNAL_ASSERT(out.dtype() == (is_floating(x.dtype()) ? x.dtype() : ScalarType::Int64),
                         "a sum is of its input's floating type, or int64");
  // out has x's rank (keepdim). The outer index space walks the kept dims (the input at each output's first
  // element), the inner one the reduced dims of the input.
  const std::size_t rank = x.sizes().size();
  Dims outer_sizes(rank, 1), inner_sizes(rank, 1), in_kept(rank, 0), in_reduced(rank, 0);
  for (std::size_t d = 0; d < rank; ++d) {
    (reduce[d] ? inner_sizes : outer_sizes)[d] = x.sizes()[d];
    (reduce[d] ? in_reduced : in_kept)[d] = x.strides()[d];
  }
  kernels::SumCall c;
  c.dtype = x.dtype();
  c.out = element0(out);
  c.in = element0(x);
  const std::int64_t* outer_st[] = {out.strides().data(), in_kept.data()};
  const std::int64_t* inner_st[] = {in_reduced.data()};
  const bool fits = kernels::make_geometry(static_cast<int>(rank), outer_sizes.data(), 2, outer_st, c.outer) &&
                    kernels::make_geometry(static_cast<int>(rank), inner_sizes.data(), 1, inner_st, c.inner);
  PARITY_INTERNAL_ASSERT(fits, "more than " + std::to_string(kernels::kMaxDims) + " dims remain after coalescing");
  if (out.device().type == DeviceType::CPU && (x.dtype() == ScalarType::Float16 || x.dtype() == ScalarType::BFloat16) &&
      x.numel() > 0 && !follows(VersionGate::ReducedFloatSumsAccumulateInFloat)) {
    Dims seen(rank);
    for (std::size_t d = 0; d < rank; ++d)
      seen[d] = reduce[d] && (x.sizes()[d] != 1 || !keepdim) ? 0 : out.strides()[d];
    const std::vector<ReducedGroup> groups = separately_stored_groups(x, seen);
    if (!groups.empty()) {
      // The slowest group outermost: the runs of groups[0] are stored with groups[1] fastest, then groups[2], ...
      Dims sizes, strides;
      for (auto g = groups.rbegin(); g != groups.rend(); ++g) sizes.push_back(g->size), strides.push_back(g->stride);
      const std::int64_t* st[] = {strides.data()};
      const bool walked = kernels::make_geometry(static_cast<int>(sizes.size()), sizes.data(), 1, st, c.inner);
      PARITY_INTERNAL_ASSERT(walked && c.inner.ndim == static_cast<int>(groups.size()),
                             "reduced groups TensorIterator keeps apart stay apart");
      c.round_each_run = true;
    }
  }
  switch (out.device().type) {
    case DeviceType::CPU: return cpu::run_sum(c);
    case DeviceType::CUDA: return cuda::run_sum(c, out);
  }
}

namespace {
bool has_internal_overlap(const Layout& l) {
  if (l.is_non_overlapping_and_dense()) return false;
  for (std::size_t i = 0; i < l.sizes.size(); ++i)
    if (l.strides[i] == 0 && l.sizes[i] > 1) return true;
  return false;
}
}  // namespace

// ATen's get_overlap_status: the same tensor overlaps fully; dense tensors of one storage by their byte ranges.
Overlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::No;
  if (!a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense()) return Overlap::TooHard;
  if (a.storage().key() != b.storage().key()) return Overlap::No;
  auto ab = a.offset() * static_cast<std::int64_t>(element_size(a.dtype()));
  auto ae = ab + a.numel() * static_cast<std::int64_t>(element_size(a.dtype()));
  auto bb = b.offset() * static_cast<std::int64_t>(element_size(b.dtype()));
  auto be = bb + b.numel() * static_cast<std::int64_t>(element_size(b.dtype()));
  if (ab == bb && ae == be) return a.strides() == b.strides() ? Overlap::Full : Overlap::Partial;
  return ab < be && bb < ae ? Overlap::Partial : Overlap::No;
}

void check_no_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  PARITY_CHECK(!has_internal_overlap(out.layout()), ErrorKind::Overlap,
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
        "Please clone() the tensor before performing the operation.");
  check_no_partial_overlap(out, inputs);
}

void check_no_partial_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* in : inputs)
    PARITY_CHECK(overlap_status(out, *in) != Overlap::Partial, ErrorKind::Overlap,
          "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
          "memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace parity::impl::ops
