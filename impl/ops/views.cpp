#include "impl/autograd/grad_mode.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/node_builder.h"

namespace parity::impl {

using autograd::Formula;
using autograd::TensorList;
using ops::make_node;

namespace {
// A differentiable view of x with the layout geometry() computes, whose gradient is backward(grad). As in
// PyTorch's generated code, the node (and so x's grad_fn) is built before the view's arguments are checked.
template <typename G, typename F>
Tensor make_view(const Tensor& x, G&& geometry, const char* name, F&& backward) {
  std::shared_ptr<Formula> node;
  if (autograd::compute_requires_grad({&x}))
    node = make_node(name, {&x}, [backward](const Tensor& g, const TensorList&, const Formula&) {
      return TensorList{backward(g)};
    });
  Tensor v = autograd::make_view(x, geometry(),
                                 autograd::grad_mode_enabled() ? autograd::CreationMeta::Default
                                                               : autograd::CreationMeta::NoGradMode);
  if (node) autograd::set_history(v, node);
  return v;
}
}  // namespace

Tensor view(const Tensor& x, const Dims& sizes) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::view(x.layout(), sizes); }, "ViewBackward0",
                   [in](const Tensor& g) { return reshape(g, in); });
}

Tensor reshape(const Tensor& x, const Dims& sizes) {
  Dims shape = infer_view_size(sizes, x.numel());
  Dims in = x.sizes();
  if (auto strides = view_strides(x.layout(), shape))
    return make_view(x, [&] { return Layout{shape, *strides, x.offset()}; }, "ReshapeAliasBackward0",
                     [in](const Tensor& g) { return reshape(g, in); });
  // Not viewable: a contiguous copy, reinterpreted (_unsafe_view, not a view for autograd).
  Tensor c = clone(x, MemoryFormat::Contiguous);
  Tensor out = autograd::make_alias(c, Layout::dense(shape));
  if (autograd::compute_requires_grad({&c}))
    autograd::set_history(out, make_node("UnsafeViewBackward0", {&c}, [in](const Tensor& g, const TensorList&, const Formula&) {
                            return TensorList{reshape(g, in)};
                          }));
  return out;
}

Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1) {
  return make_view(x, [&] { return geometry::transpose(x.layout(), d0, d1); }, "TransposeBackward0",
                   [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}

Tensor permute(const Tensor& x, const Dims& dims) {
  return make_view(x, [&] { return geometry::permute(x.layout(), dims); }, "PermuteBackward0", [dims](const Tensor& g) {
    Dims inverse(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], g.dim())] = static_cast<std::int64_t>(i);
    return permute(g, inverse);
  });
}

Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::slice(x.layout(), dim, start, end, step); }, "SliceBackward0",
                   [in, dim, start, end, step](const Tensor& g) {
                     Tensor r = zeros(in, g.dtype());
                     copy_(slice(r, dim, start, end, step), g);
                     return r;
                   });
}

Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::select(x.layout(), dim, index); }, "SelectBackward0", [in, dim, index](const Tensor& g) {
    Tensor r = zeros(in, g.dtype());
    copy_(select(r, dim, index), g);
    return r;
  });
}

Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  (void)geometry::narrow(x.layout(), dim, start, length);  // narrow's own checks, before slice's
  std::int64_t n = x.sizes()[wrap_dim(dim, x.dim())];
  if (start != n) start = wrap_dim(start, n);
  return slice(x, dim, start, start + length, 1);
}

Tensor expand(const Tensor& x, const Dims& sizes) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::expand(x.layout(), sizes, std::string(legacy_type_name(x.dtype()))); },
                   "ExpandBackward0", [in](const Tensor& g) { return sum_to(g, in); });
}

Tensor squeeze(const Tensor& x) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::squeeze(x.layout()); }, "SqueezeBackward0", [in](const Tensor& g) {
    Tensor r = g;
    for (std::size_t d = 0; d < in.size(); ++d)
      if (in[d] == 1) r = unsqueeze(r, static_cast<std::int64_t>(d));
    return r;
  });
}

Tensor squeeze(const Tensor& x, std::int64_t dim) {
  Dims in = x.sizes();
  return make_view(x, [&] { return geometry::squeeze(x.layout(), dim); }, "SqueezeBackward1", [in, dim](const Tensor& g) {
    std::int64_t d = wrap_dim(dim, static_cast<std::int64_t>(in.size()));
    return (!in.empty() && in[d] == 1) ? unsqueeze(g, d) : g;
  });
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  return make_view(x, [&] { return geometry::unsqueeze(x.layout(), dim); }, "UnsqueezeBackward0",
                   [dim](const Tensor& g) { return squeeze(g, dim); });
}

Tensor as_strided(const Tensor& x, const Dims& sizes, const Dims& strides, std::int64_t offset) {
  Layout in = x.layout();
  auto storage_numel = static_cast<std::int64_t>(x.storage().nbytes() / element_size(x.dtype()));
  return make_view(x, [&] { return geometry::as_strided(sizes, strides, offset, storage_numel, element_size(x.dtype())); },
                   "AsStridedBackward0", [in, sizes, strides, offset](const Tensor& g) {
                     return autograd::as_strided_backward(g, in, sizes, strides, offset);
                   });
}

}  // namespace parity::impl
