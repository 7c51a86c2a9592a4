#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/ops/node_builder.h"
#include "impl/version_gate.h"

namespace parity::impl {

using autograd::Derivative;
using autograd::Formula;
using autograd::TensorList;
using ops::make_node;

Tensor clone(const Tensor& x, MemoryFormat format) {
  auto node = autograd::compute_requires_grad({&x})
                  ? make_node(Derivative::CloneBackward0, {&x}, [](const Tensor& g, const TensorList&, const Formula&) {
                      return TensorList{g};
                    })
                  : nullptr;
  // empty_strided of x's strides when dense, else empty_like; the copy writes every element.
  const Layout layout = format != MemoryFormat::Preserve        ? Layout::dense(x.sizes(), format)
                        : x.is_non_overlapping_and_dense() ? Layout{x.sizes(), x.strides(), 0}
                                                           : x.layout().preserved();
  Tensor out = Tensor::allocate_uninitialized(layout, x.dtype(), x.device());
  ops::copy_kernel(out, x);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor contiguous(const Tensor& x, MemoryFormat format) {
  if (x.is_contiguous(format == MemoryFormat::Preserve ? MemoryFormat::Contiguous : format)) return x;
  PARITY_CHECK(format != MemoryFormat::Preserve, ErrorKind::MemoryFormat,
        "preserve memory format is unsupported by the contiguous operator");
  return clone(x, format);
}

Tensor detach(const Tensor& x) { return autograd::make_alias(x, x.layout()); }

Tensor detach_(const Tensor& x) {
  autograd::detach_inplace(x);
  return x;
}

Tensor variable_data(const Tensor& x) { return Tensor::over(x.storage(), x.layout(), x.dtype(), VersionCounter()); }

namespace {

// _to_copy: a fresh tensor of `dtype` on `device`, differentiable only towards a floating type; its gradient goes
// back to x's dtype and device (grad.to(self.options())).
Tensor to_copy(const Tensor& x, ScalarType dtype, Device device, MemoryFormat format) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x}) && is_floating(dtype)) {
    ScalarType from = x.dtype();
    Device from_device = x.device();
    node = make_node(Derivative::ToCopyBackward0, {&x}, [from, from_device](const Tensor& g, const TensorList&, const Formula&) {
      return TensorList{to_copy_options(g, from, from_device)};
    });
  }
  // preserve_format: x's strides when dense, else dense strides in x's dim order (expanded dims too).
  Tensor out = Tensor::allocate_uninitialized(
      format == MemoryFormat::Preserve ? x.layout().preserved() : Layout::dense(x.sizes(), format), dtype, device);
  ops::copy_kernel(out, x);  // across devices too: copy_ allows a source on another device
  if (node) autograd::set_history(out, node);
  return out;
}

}  // namespace

Tensor to_copy_options(const Tensor& x, ScalarType dtype, Device device) {
  if (x.dtype() == dtype && x.device() == device) return x;
  return to_copy(x, dtype, device, MemoryFormat::Preserve);
}

Tensor to(const Tensor& x, ScalarType dtype, bool copy, MemoryFormat format) {
  // to_will_alias: nothing to change, and the memory format asked for is the one x suggests.
  if (x.dtype() == dtype && !copy &&
      (format == MemoryFormat::Preserve || x.layout().suggest_memory_format() == format))
    return x;
  return to_copy(x, dtype, x.device(), format);
}

Tensor to(const Tensor& x, Device device, bool copy) {
  // to_will_alias: x itself when it is already there (LibTorch gives "cuda" the current device's index first).
  if (x.device() == device && !copy) return x;
  return to_copy(x, x.dtype(), device, MemoryFormat::Preserve);
}

Tensor new_tensor(const Tensor& x) { return to(detach(x), x.dtype(), /*copy=*/true); }

Tensor copy_(const Tensor& self, const Tensor& src) {
  bool rg = autograd::compute_requires_grad({&self, &src}) && is_floating(self.dtype());
  autograd::check_inplace(self, rg);
  Rc<Formula> node;
  if (rg) {
    ScalarType src_type = src.dtype();
    Device src_device = src.device();  // the source may be on another device: its gradient goes back there
    node = make_node(Derivative::CopyBackwards, {&self, &src},
                     [src_type, src_device](const Tensor& g, const TensorList&, const Formula& n) {
                       TensorList out(2);
                       if (n.should_compute_output(0)) out[0] = zeros_like(g, MemoryFormat::Contiguous);
                       if (n.should_compute_output(1)) out[1] = to_copy_options(g, src_type, src_device);
                       return out;
                     });
  }
  // LibTorch 1.13's copy_impl returns early only for the very same tensor; another tensor over the same elements
  // (expand, a view with the same geometry) goes through TensorIterator, whose checks refuse a destination with
  // internal overlap and allow a full (same-geometry) overlap with the source. 2.x returns early for those too.
  const bool same_data = follows(VersionGate::CopySameDataIsNoOp) && self.storage().key() == src.storage().key() &&
                         self.layout() == src.layout() && self.dtype() == src.dtype();
  if (!self.is_same(src) && !same_data) {
    ops::check_no_overlap(self, {&src});
    Dims shape = broadcast_shapes(self.sizes(), src.sizes());
    PARITY_CHECK(shape == self.sizes(), ErrorKind::Shape,
          "output with shape " + format_dims(self.sizes()) + " doesn't match the broadcast shape " + format_dims(shape));
    ops::copy_kernel(self, src);
  }
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

}  // namespace parity::impl
