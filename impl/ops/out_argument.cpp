#include "impl/ops/out_argument.h"

#include <string>

#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops/iteration.h"

namespace parity::impl::ops {

void refuse_out_requiring_grad(std::string_view op, std::initializer_list<const Tensor*> inputs, const Tensor& out) {
  const std::string refusal = std::string(op) +
                              "(): functions with out=... arguments don't support automatic differentiation, but one "
                              "of the arguments requires grad.";
  PARITY_CHECK(!autograd::compute_requires_grad(inputs), ErrorKind::OutRequiresGrad, refusal);
  PARITY_CHECK(!autograd::compute_requires_grad({&out}), ErrorKind::OutRequiresGrad, refusal);
}

void check_out_dtype(const Tensor& out, ScalarType computed, OutDtype rule) {
  switch (rule) {
    case OutDtype::CastSafely:
      PARITY_CHECK(can_cast(computed, out.dtype()), ErrorKind::DType,
                   "result type " + std::string(type_name(computed)) + " can't be cast to the desired output type " +
                       std::string(type_name(out.dtype())));
      return;
    case OutDtype::MustMatch:
      PARITY_CHECK(out.dtype() == computed, ErrorKind::DType,
                   "Found dtype " + std::string(type_name(out.dtype())) + " but expected " +
                       std::string(type_name(computed)));
      return;
    case OutDtype::Unchecked: return;
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

void check_out_shape(const Tensor& out, const Dims& shape, std::initializer_list<const Tensor*> inputs) {
  if (out.sizes() == shape) return;
  for (const Tensor* in : inputs)
    PARITY_CHECK(!out.is_same(*in), ErrorKind::Shape,
                 "output with shape " + format_dims(out.sizes()) + " doesn't match the broadcast shape " +
                     format_dims(shape));
}

void resize_output(const Tensor& out, const Dims& shape, const Layout& fresh) {
  if (out.sizes() == shape) return;
  const Layout resized{shape, fresh.strides, out.offset()};
  out.storage().grow(static_cast<std::size_t>(out.offset() + resized.numel()) * element_size(out.dtype()));
  out.restride(resized);
}

void write_result(const Tensor& out, ScalarType computed, const std::function<void(const Tensor& into)>& kernel) {
  if (computed == out.dtype()) {
    kernel(out);
    return;
  }
  Tensor tmp = Tensor::allocate_uninitialized(Layout::dense(out.sizes()), computed, out.device());
  kernel(tmp);
  copy_kernel(out, tmp);
}

}  // namespace parity::impl::ops
