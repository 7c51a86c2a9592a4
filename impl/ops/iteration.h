// Elementwise machinery shared by impl's ops: PyTorch's TensorIterator rules for the output's dtype and
// layout, broadcasting, and the typed CPU kernels. Internal to impl/ops.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "impl/kernels/pointwise.h"
#include "impl/ops.h"

namespace parity::impl::ops {

struct Operand {
  Tensor tensor;
  bool wrapped = false;  // a scalar argument: lowest priority in type promotion
};

// result_type: dimensioned tensors, then zero-dim tensors, then wrapped scalars.
ScalarType result_type(std::initializer_list<const Operand*> operands);
// The same, with a Scalar argument among the operands as the wrapped number it becomes.
ScalarType result_type(std::initializer_list<const Operand*> operands, Scalar wrapped);
// The dtype at::scalar_to_tensor gives a Scalar: int64, bool or float64 by its kind.
ScalarType wrapped_dtype(Scalar s);
// at::scalar_to_tensor: a 0-dim tensor of the scalar's kind (int64, bool or float64).
Tensor wrap_scalar(Scalar s);
// wrap_scalar(s) as a kernel computing in `dtype` reads it: one 0-dim tensor of `dtype` holding what converting
// wrap_scalar(s) to `dtype` would give (the two conversions composed), where the wrapped number itself would only
// be made to be converted.
Tensor wrap_scalar(Scalar s, ScalarType dtype);

// Output layout TensorIterator allocates for inputs broadcast to `shape` (fast set-up, else stride ordering).
Layout elementwise_layout(const Dims& shape, std::initializer_list<const Layout*> inputs);
Layout elementwise_layout(const Dims& shape, std::span<const Layout* const> inputs);

// Strides of `t` broadcast to `shape` (0 on broadcast dims).
Dims broadcast_strides(const Tensor& t, const Dims& shape);

// Where t's element 0 is (its offset applied): what a kernel call's operand pointers hold.
std::byte* element0(const Tensor& t);

// Writes src, broadcast to dst's shape and converted to dst's dtype, into dst (no checks, no autograd).
void copy_kernel(const Tensor& dst, const Tensor& src);

// The kernels' ops (impl/kernels/pointwise.h): one source for the CPU and CUDA.
using kernels::BinaryOp;
using kernels::CompareOp;
using kernels::ResultBackward;
using kernels::UnaryOp;

// out = condition ? a : b elementwise; a, b and out of one dtype, condition bool, all broadcast to out's shape.
void where_kernel(const Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b);
// out[i] = value where mask (bool, broadcast to out's shape) holds; other elements keep what they hold. The value
// is converted to out's dtype as fill_ converts it.
void masked_fill_kernel(const Tensor& out, const Tensor& mask, double value);
// masked_fill_ below autograd: ATen's checks in its order (the mask's dtype, its partial overlap with self,
// broadcasting to self's shape, the value's conversion), then the write. A self whose elements share memory is
// written anyway: ATen only warns, and every shared slot receives the same value. (index_put_ of one value
// through a mask dispatches here too.)
void masked_fill_checked(const Tensor& self, const Tensor& mask, double value);
// out = self + value * t1 * t2 in out's dtype (ATen's order of operations), all broadcast to out's shape; the
// value is converted to out's dtype first. Integers wrap.
void addcmul_kernel(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, double value);
// out (bool) = a op b; a and b of one dtype, broadcast to out's shape. NaN equals nothing, itself included.
void compare_kernel(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b);
// out = a op b, all of out's dtype; a and b broadcast to out's shape.
void binary_kernel(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b);
// out = op(x), both of out's dtype. Bool elements pass through unchanged (ops reject bool inputs or compute them
// in a floating type); the floating ops compute in the element type, a 16-bit one in float rounded once.
void unary_kernel(UnaryOp op, const Tensor& out, const Tensor& x);

// TensorIterator's device rule (compute_types): the common device is the first operand's (outputs first) that is
// not on the CPU, else the CPU; an operand on another device raises "Expected all tensors to be on the same
// device, but found at least two devices, cuda:0 and cpu!", except, where the op allows CPU scalars (binary and
// comparison ops), one 0-dim CPU input, which the kernel reads as a scalar argument (kernel_operand).
// `output`: the tensor an in-place op writes, or null. `cast_to_output`: the common dtype, where the op requires it
// to cast safely to the output (enforce_safe_casting_to_output). compute_types reviews the operands in one loop,
// outputs first, each one's device and then that cast, so an output that cannot hold the result raises before an
// input on another device does, and an output on another device before its cast.
Device common_device(const Tensor* output, std::initializer_list<const Tensor*> inputs, bool allow_cpu_scalars,
                     std::optional<ScalarType> cast_to_output = std::nullopt);
// The device check that LibTorch's generated wrappers run before an op's own checks (check_and_update_common_device):
// the common device is the first argument's, and the first argument on another device raises, naming itself and
// the wrapper (`wrapper`: "mm", "addmv_", "_dot" as codegen names it after "wrapper_CUDA_"). The wording is
// the release's (VersionGate::WrapperDeviceMessageNamesArgument).
struct WrapperArgument {
  const char* name;
  const Tensor* tensor;
};
Device wrapper_device(const char* wrapper, std::initializer_list<WrapperArgument> arguments);
// The layout TensorIterator lays an output out from, for an input it computes in another dtype: on the CPU it
// converts the input first (.to(), preserve_format), so the converted copy's; on a device it converts nothing (the
// kernels cast as they read), so the input's own.
inline const Layout& iterator_input_layout(const Tensor& converted, const Tensor& input) {
  return input.device().type == DeviceType::CPU ? converted.layout() : input.layout();
}
// `t` where a kernel on `device` can read it: t itself, or a CPU scalar's copy on the device (no autograd).
// By value: a caller done with its operand moves it in, so the common case (already there) costs no reference count.
Tensor kernel_operand(Tensor t, Device device);

// The kernels above run on the device their operands are on (all on one: the ops check devices first); the rest
// of impl's loops read memory on the host: this raises a Device error for a tensor elsewhere.
void require_cpu(std::initializer_list<const Tensor*> tensors);

void pow_kernel(const Tensor& out, const Tensor& x, double exponent);
void fill_kernel(const Tensor& out, double value);
// Writes 0, 1, ..., out.numel() - 1 into out (contiguous, in host memory) as `device`'s arange kernel rounds them
// to out's dtype: CUDA rounds each index once; the CPU rounds twice where it vectorises (see arange_kernel).
void arange_kernel(const Tensor& out, DeviceType device);
// out = min(max(x, lo), hi) with the bounds converted to out's dtype; a missing bound is not applied. As in
// ATen's scalar loop, a NaN element stays NaN and a NaN bound leaves elements unchanged.
void clamp_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi);
// clamp_backward's mask: out (bool, x's shape) = lo <= x <= hi, the bounds converted to x's dtype; a missing
// bound is not applied, a NaN x fails.
// `bounds_included` false: x strictly between the bounds (VersionGate::ClampBackwardExcludesBounds).
void clamp_mask_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi,
                       bool bounds_included);
// threshold_backward: 0 where x <= threshold, else grad; all operands of out's dtype and shape.
// sigmoid_backward / tanh_backward: the gradient from the saved result y, one fused pass (grad * (1 - y) * y,
// grad * (1 - y * y)) as LibTorch's kernels compute it.
void result_backward_kernel(ResultBackward op, const Tensor& out, const Tensor& grad, const Tensor& y);
void threshold_backward_kernel(const Tensor& out, const Tensor& grad, const Tensor& x, double threshold);
// What sums a product's elements in LibTorch: a BLAS (mm, mv, dot, a large bmm's addmm) or ATen's own loop (a
// small bmm). From release 2.0 they round float and double differently (VersionGate::BlasFusesMultiplyAdd).
enum class ProductKernel { Blas, Loop };
// Matrix product out = a @ b of 2-d operands, or of 3-d ones batch by batch, all of out's dtype (no checks; an
// empty inner dimension writes zeros), with the roundings of `kernel`.
void matmul_kernel(const Tensor& out, const Tensor& a, const Tensor& b, ProductKernel kernel);
// Sum over `reduce` dims (mask), output laid out as `out` (keepdim shape). `keepdim`: what the op was asked for,
// which decides how LibTorch 1.13's iterator orders size-1 reduced dims (VersionGate::ReducedFloatSumsAccumulateInFloat).
void sum_kernel(const Tensor& out_keepdim, const Tensor& x, const std::vector<bool>& reduce, bool keepdim);

// The dtypes an ATen kernel's dispatch macro leaves out, on each device, and the name its error gives:
// "\"kernel\" not implemented for 'Half'". The CPU kernels of LibTorch 1.13 leave out Half in the vml unary
// ops, sigmoid, clamp, the products and addcmul, which later releases take (VersionGate::CpuKernelsTakeHalf);
// Bool in most arithmetic. The CUDA kernels always take Half; cuBLAS's products take no integers.
class DTypeSet {
 public:
  constexpr DTypeSet(std::initializer_list<ScalarType> types) {
    for (ScalarType t : types) bits_ |= static_cast<std::uint16_t>(1u << static_cast<unsigned>(t));
  }
  constexpr bool contains(ScalarType t) const { return (bits_ >> static_cast<unsigned>(t)) & 1u; }

 private:
  std::uint16_t bits_ = 0;
};
struct KernelDispatch {
  const char* cpu_kernel;
  DTypeSet cpu_missing;
  const char* cuda_kernel;
  DTypeSet cuda_missing;
};
// Raises for `t` as the kernel that runs on `device` does.
void check_dispatch(Device device, const KernelDispatch& kernel, ScalarType t);

// c10::checked_convert's range check of a double into an integral type of [lowest, max]
// (FloatToIntegralRangeIsExact); NaN and infinities never fit.
bool fits_integral(double value, std::int64_t lowest, std::int64_t max);
// c10's checked conversion of a scalar argument to an element type (Scalar::to<T>).
void check_scalar_fits(double value, ScalarType dtype);
// fill_out's conversion of its value (fill_, full): checked as check_scalar_fits, except for a one-element CPU
// float16 or bfloat16 tensor in 2.x, whose fast path converts unchecked (OneElementFillOfReducedFloatsUnchecked).
void check_fill_value(double value, const Tensor& out);

// How two tensors share memory, as ATen's get_overlap_status judges it (TooHard: a layout it does not judge).
enum class Overlap { No, Partial, Full, TooHard };
Overlap overlap_status(const Tensor& a, const Tensor& b);

// Errors TensorIterator raises for a write into `out` that overlaps itself or an input.
void check_no_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs);
// Only the second of them (at::assert_no_partial_overlap): for kernels that accept a self-overlapping output.
void check_no_partial_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs);

}  // namespace parity::impl::ops
