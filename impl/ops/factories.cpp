#include <limits>
#include <string_view>

#include "impl/autograd/meta.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/version_gate.h"

namespace parity::impl {

namespace {
void check_sizes(const Dims& sizes) {
  for (auto s : sizes)
    PARITY_CHECK(s >= 0, ErrorKind::Argument,
          "Trying to create tensor with negative dimension " + std::to_string(s) + ": " + format_dims(sizes));
}
}  // namespace

Tensor empty(const Dims& sizes, ScalarType dtype, MemoryFormat format, Device device) {
  check_sizes(sizes);
  PARITY_CHECK(format != MemoryFormat::Preserve, ErrorKind::MemoryFormat, "preserve memory format is unsupported by empty");
  return Tensor::allocate(Layout::dense(sizes, format), dtype, device);
}

Tensor empty_strided(const Dims& sizes, const Dims& strides, ScalarType dtype, Device device) {
  check_sizes(sizes);
  return Tensor::allocate(Layout{sizes, strides, 0}, dtype, device);
}

Tensor full(const Dims& sizes, Scalar value, ScalarType dtype, bool requires_grad, Device device) {
  Tensor t = empty(sizes, dtype, MemoryFormat::Contiguous, device);  // the sizes are checked first
  ops::check_fill_value(value.value, t);
  ops::fill_kernel(t, value.value);
  if (requires_grad) autograd::set_requires_grad(t, true);
  return t;
}

Tensor zeros(const Dims& sizes, ScalarType dtype, bool requires_grad, Device device) {
  if (follows(VersionGate::ZerosChecksSizes))
    for (auto s : sizes) PARITY_CHECK(s >= 0, ErrorKind::Argument, "zeros: Dimension size must be non-negative.");
  return full(sizes, Scalar::of(0), dtype, requires_grad, device);
}

Tensor ones(const Dims& sizes, ScalarType dtype, bool requires_grad, Device device) {
  return full(sizes, Scalar::of(1), dtype, requires_grad, device);
}

Tensor arange(std::int64_t end, ScalarType dtype, Device device) {
  // LibTorch checks the arguments inside its dtype dispatch, which has no bool case.
  ops::check_dispatch(device, {"arange_cpu", {ScalarType::Bool}, "arange_cuda", {ScalarType::Bool}}, dtype);
  PARITY_CHECK(end >= 0, ErrorKind::Argument,
               follows(VersionGate::ArangeNamesLowerBound) ? "upper bound and lower bound inconsistent with step sign"
                                                           : "upper bound and larger bound inconsistent with step sign");
  Tensor host = Tensor::allocate_uninitialized(Layout::dense({end}), dtype);
  ops::arange_kernel(host, device.type);
  return device.type == DeviceType::CPU ? host : cuda::to_device(host, device.index);
}

Tensor from_values(const std::vector<double>& values, ScalarType dtype) {
  return from_values(values, {static_cast<std::int64_t>(values.size())}, dtype);
}

Tensor from_values(const std::vector<double>& values, const Dims& sizes, ScalarType dtype) {
  Tensor src = Tensor::allocate(Layout::dense(sizes), ScalarType::Float64);
  PARITY_INTERNAL_ASSERT(src.numel() == static_cast<std::int64_t>(values.size()), "from_values: " +
                         std::to_string(values.size()) + " values for sizes " + format_dims(sizes));
  std::copy(values.begin(), values.end(), src.data<double>());
  if (dtype == ScalarType::Float64) return src;
  Tensor out = Tensor::allocate_uninitialized(src.layout(), dtype);
  ops::copy_kernel(out, src);
  return out;
}

namespace {
// Python's store_scalar of one element: into an integral dtype c10::checked_convert, naming the type as Python
// does; into the others the number as it is, for copy_kernel's cast (into float16 past its range: inf; into
// bool: nonzero).
double stored_element(double v, ScalarType dtype) {
  auto check = [v](auto lowest, auto max, std::string_view name) {
    PARITY_CHECK_AS(ops::fits_integral(v, lowest, max), ErrorKind::Argument, RuntimeError,
                    "value cannot be converted to type " + std::string(name) + " without overflow");
  };
  using I32 = std::numeric_limits<std::int32_t>;
  using I64 = std::numeric_limits<std::int64_t>;
  if (dtype == ScalarType::Int32) check(I32::min(), I32::max(), "int32");
  if (dtype == ScalarType::Int64) check(I64::min(), I64::max(), "int64");
  if (dtype != ScalarType::Int64) return v;
  // Where 2^63 passes the check (FloatToIntegralRangeIsExact), x86's conversion (cvttsd2si) makes it int64's
  // lowest value.
  return v == 0x1p63 ? -0x1p63 : v;
}
}  // namespace

Tensor literal_tensor(const std::vector<Scalar>& elements, const Dims& sizes, ScalarType dtype, bool requires_grad,
                      Device device) {
  check_sizes(sizes);
  std::vector<double> values;
  values.reserve(elements.size());
  for (const Scalar& e : elements) values.push_back(stored_element(e.value, dtype));
  Tensor host = from_values(values, sizes, dtype);
  Tensor t = device.type == DeviceType::CPU ? host : cuda::to_device(host, device.index);
  if (requires_grad) autograd::set_requires_grad(t, true);
  return t;
}

Tensor empty_like(const Tensor& x, MemoryFormat format) {
  if (format != MemoryFormat::Preserve) return empty(x.sizes(), x.dtype(), format, x.device());
  return Tensor::allocate(x.layout().preserved(), x.dtype(), x.device());
}

// ATen's full_like is empty_like, then fill_ below autograd: the value is checked against the dtype, the version
// stays 0 and the result never requires grad.
Tensor full_like(const Tensor& x, Scalar value, MemoryFormat format) {
  Tensor t = empty_like(x, format);
  ops::check_fill_value(value.value, t);
  ops::fill_kernel(t, value.value);
  return t;
}

Tensor zeros_like(const Tensor& x, MemoryFormat format) { return full_like(x, Scalar::of(0), format); }

Tensor ones_like(const Tensor& x, MemoryFormat format) { return full_like(x, Scalar::of(1), format); }

}  // namespace parity::impl
