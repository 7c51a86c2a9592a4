#include "impl/autograd/grad_mode.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/ops/node_builder.h"
#include "impl/version_gate.h"

namespace parity::impl {

using autograd::CreationMeta;
using autograd::Derivative;
using autograd::Formula;
using autograd::TensorList;
using ops::make_node;

namespace {
// A differentiable view of x with the layout geometry() computes, whose gradient is backward(grad). As in
// PyTorch's generated code, the node (and so x's grad_fn) is built before the view's arguments are checked.
template <typename G, typename F>
Tensor make_view_op(const Tensor& x, G&& geometry, Derivative d, F&& backward) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x}))
    node = make_node(d, {&x}, [backward](const Tensor& g, const TensorList&, const Formula&) {
      return TensorList{backward(g)};
    });
  Tensor v = autograd::as_view(x, geometry(),
                                 autograd::grad_mode_enabled() ? CreationMeta::Default : CreationMeta::NoGradMode);
  if (node) autograd::set_history(v, node);
  return v;
}

// The gradient of a view op's input: zeros of the input's shape with each output's gradient written into that
// output's geometry, which `pieces` computes from the zeros' layout (slice_backward, select_backward,
// diagonal_backward, the stack and cat of unbind and split), summed where geometries overlap (unfold_backward).
// Written by kernels, not copy_: PyTorch runs these backward functions below the ADInplaceOrView key, so the
// result is still at version 0, which shows when AccumulateGrad steals it into .grad.
// `allocated`: the sizes the result is allocated with, in `format`, and then viewed as `in` (stack's cat along an
// existing dim); by default `in` itself.
template <typename Pieces>
Tensor view_backward(const Dims& in, const TensorList& grads, Pieces&& pieces, bool accumulate = false,
                     MemoryFormat format = MemoryFormat::Contiguous, const std::optional<Dims>& allocated = {}) {
  const Tensor* like = nullptr;
  for (const auto& g : grads)
    if (g.defined() && !like) like = &g;
  Tensor r = empty(allocated ? *allocated : in, like->dtype(), format, like->device());
  if (allocated) r = autograd::make_alias(r, geometry::view(r.layout(), in, followed_release()));
  ops::fill_kernel(r, 0);
  std::vector<Layout> slots = pieces(r.layout());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    Tensor slot = autograd::make_alias(r, slots[i]);
    if (accumulate)
      ops::binary_kernel(ops::BinaryOp::Add, slot, slot, grads[i]);
    else
      ops::copy_kernel(slot, grads[i]);
  }
  return r;
}

// view_backward for a view op with one output, whose geometry `piece` computes.
template <typename Piece>
Tensor single_view_backward(const Dims& in, const Tensor& g, Piece&& piece) {
  return view_backward(in, {g}, [&](const Layout& l) { return std::vector<Layout>{piece(l)}; });
}

// The ATen op a single view's gradient is (slice_backward, select_backward, diagonal_backward, unfold_backward):
// `value()` computed below autograd and, under create_graph, a node of its own (`name`, SliceBackwardBackward0...)
// whose derivative is the view op again, applied to the gradient's gradient (derivatives.yaml).
template <typename Value, typename Again>
Tensor backward_op(Derivative d, const Tensor& g, Value&& value, Again again) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&g}))
    node = make_node(d, {&g}, [again](const Tensor& gg, const TensorList&, const Formula&) { return TensorList{again(gg)}; });
  Tensor out = value();
  if (node) autograd::set_history(out, node);
  return out;
}

// The memory format at::cat gives its result (compute_output_memory_format): the format every input suggests,
// contiguous as soon as one suggests contiguous or two disagree. An undefined gradient is contiguous zeros; stack
// (unbind's backward) concatenates its inputs unsqueezed at the stacking dim.
MemoryFormat cat_memory_format(const TensorList& grads, std::optional<std::int64_t> stacked_dim) {
  std::optional<MemoryFormat> format;
  for (const Tensor& g : grads) {
    MemoryFormat f = MemoryFormat::Contiguous;
    if (g.defined())
      f = (stacked_dim ? geometry::unsqueeze(g.layout(), *stacked_dim) : g.layout()).suggest_memory_format();
    if (f == MemoryFormat::Contiguous || (format && *format != f)) return MemoryFormat::Contiguous;
    format = f;
  }
  return format.value_or(MemoryFormat::Contiguous);
}

// How a multi-output view's backward joins its outputs' gradients: at::cat (split) or at::stack (unbind).
enum class Joined { Cat, Stack };

// The gradient of a multi-output view's input from its outputs' gradients (undefined ones are zeros): their cat
// or stack along `dim`, whose result takes the gradients' memory format. Under create_graph the join is recorded
// (CatBackward0, StackBackward0), its derivative handing each gradient its piece of the gradient's gradient:
// cat_tensors_backward's narrow (zeros({0}) for a piece of an empty 1-d input), stack_tensors_backward's select.
template <typename Pieces>
Tensor joined_gradients(const Dims& in, const TensorList& grads, const Pieces& pieces, std::int64_t dim, Joined joined) {
  const std::int64_t rank = static_cast<std::int64_t>(in.size());
  const std::int64_t d = wrap_dim(dim, rank);
  Tensor value;
  if (joined == Joined::Cat) {
    value = view_backward(in, grads, pieces, false, cat_memory_format(grads, std::nullopt));
  } else if (d == rank - 1) {
    // LibTorch 1.13's stack: inside the gradients' rank, cat along that dim and view the result with the new dim
    // (view's strides for it, not cat's); at the end, cat of the gradients unsqueezed there.
    value = view_backward(in, grads, pieces, false, cat_memory_format(grads, d));
  } else {
    Dims cat_sizes = in;
    cat_sizes.erase(cat_sizes.begin() + d);
    cat_sizes[static_cast<std::size_t>(d)] *= in[static_cast<std::size_t>(d)];
    value = view_backward(in, grads, pieces, false, cat_memory_format(grads, std::nullopt), cat_sizes);
  }
  bool record = false;
  for (const Tensor& g : grads) record = record || autograd::compute_requires_grad({&g});
  if (!record) return value;
  const std::vector<Layout> slots = pieces(Layout::dense(in));
  auto node = make_rc<Formula>(joined == Joined::Cat ? Derivative::CatBackward0 : Derivative::StackBackward0,
                                        [slots, d, joined](const Tensor& gg, const TensorList&, const Formula&) {
                                          TensorList out;
                                          std::int64_t start = 0;
                                          for (std::size_t i = 0; i < slots.size(); ++i) {
                                            if (joined == Joined::Stack) {
                                              out.push_back(select(gg, d, static_cast<std::int64_t>(i)));
                                              continue;
                                            }
                                            const std::int64_t length = slots[i].sizes[static_cast<std::size_t>(d)];
                                            out.push_back(slots[i].sizes == Dims{0}
                                                              ? zeros({0}, gg.dtype(), false, gg.device())
                                                              : slice(gg, d, start, start + length, 1));
                                            start += length;
                                          }
                                          return out;
                                        });
  autograd::EdgeList edges;
  for (const Tensor& g : grads) edges.push_back(g.defined() ? autograd::gradient_edge(g) : autograd::Edge{});
  node->set_next_edges(std::move(edges));
  autograd::set_history(value, node);
  return value;
}

// Views returned together by one op (unbind, split): `pieces` computes every output's geometry from the input's
// layout (and raises the op's errors). All outputs share one node, output i being its output i, and are views
// that may not be written in place while grad mode is on (CreationMeta::MultiOutputNode). Their backward joins
// the outputs' gradients along `dim` (joined_gradients).
// `views` false: unsafe_split and unsafe_chunk, whose outputs share x's storage without being autograd views
// (LibTorch splits below the ADInplaceOrView key and gives each output a version counter of its own).
template <typename Pieces>
std::vector<Tensor> make_multi_view(const Tensor& x, Derivative d, Pieces pieces, std::int64_t dim, Joined joined,
                                    bool views = true) {
  Rc<autograd::MultiOutputFormula> node;
  if (autograd::compute_requires_grad({&x})) {
    node = make_rc<autograd::MultiOutputFormula>(d, [in = x.sizes(), pieces, dim, joined](const TensorList& grads) {
      return TensorList{joined_gradients(in, grads, pieces, dim, joined)};
    });
    node->set_next_edges(autograd::collect_next_edges({&x}));
  }
  CreationMeta creation = autograd::grad_mode_enabled() ? CreationMeta::MultiOutputNode : CreationMeta::NoGradMode;
  std::vector<Tensor> outs;
  for (const Layout& l : pieces(x.layout()))
    outs.push_back(views ? autograd::as_view(x, l, creation) : Tensor::over(x.storage(), l, x.dtype(), VersionCounter()));
  if (node)
    for (const auto& v : outs) autograd::set_history(v, node);
  return outs;
}

// ceil(n / d) as LibTorch computes it, in int64 arithmetic that wraps for a huge d (then split refuses the result).
std::int64_t wrapping_ceil_div(std::int64_t n, std::int64_t d) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(d) - 1) / d;
}

// Consecutive pieces of dim with the given lengths (split, split_with_sizes).
std::vector<Layout> split_pieces(const Layout& l, std::int64_t dim, const Dims& lengths) {
  std::vector<Layout> out;
  std::int64_t start = 0;
  for (auto length : lengths) {
    out.push_back(geometry::narrow(l, dim, start, length, followed_release()));
    start += length;
  }
  return out;
}

// The pieces split_with_sizes makes, with its checks in LibTorch 1.13's order and words.
auto split_with_sizes_pieces(const Dims& lengths, std::int64_t dim) {
  return [lengths, dim](const Layout& l) {
    PARITY_CHECK(l.dim() != 0, ErrorKind::Shape, "split expects at least a 1-dimensional tensor");
    const std::int64_t d = wrap_dim(dim, l.dim());
    const std::int64_t n = l.sizes[d];
    // Pieces are sliced (clamped, never raising) before the sum is checked; the message shows dim as given.
    std::int64_t total = 0;
    for (auto length : lengths) {
      PARITY_CHECK(length >= 0, ErrorKind::Argument,
                   "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=" +
                       format_dims(lengths));
      total += length;
    }
    PARITY_CHECK(total == n, ErrorKind::Argument,
                 "split_with_sizes expects split_sizes to sum exactly to " + std::to_string(n) +
                     " (input tensor's size at dimension " + std::to_string(dim) + "), but got split_sizes=" +
                     format_dims(lengths));
    return split_pieces(l, d, lengths);
  };
}

// The pieces split makes (at least one, even when split_size exceeds the size).
auto split_pieces_of_size(std::int64_t split_size, std::int64_t dim) {
  return [split_size, dim](const Layout& l) {
    PARITY_CHECK(l.dim() != 0, ErrorKind::Shape, "split expects at least a 1-dimensional tensor");
    PARITY_CHECK(split_size >= 0, ErrorKind::Argument,
                 "split expects split_size be non-negative, but got split_size=" + std::to_string(split_size));
    std::int64_t d = wrap_dim(dim, l.dim());
    std::int64_t n = l.sizes[d];
    PARITY_CHECK(split_size > 0 || n == 0, ErrorKind::Argument,
                 "split_size can only be 0 if dimension size is 0, but got dimension size of " + std::to_string(n));
    std::int64_t count = split_size == 0 ? 1 : std::max<std::int64_t>(wrapping_ceil_div(n, split_size), 1);
    Dims lengths(static_cast<std::size_t>(count), split_size);
    lengths.back() = n - split_size * (count - 1);
    return split_pieces(l, d, lengths);
  };
}

// chunk and unsafe_chunk: split into ceil(n / chunks)-sized pieces, or `chunks` empty ones of an empty dim.
template <typename Split, typename SplitWithSizes>
std::vector<Tensor> chunk_with(const Tensor& x, std::int64_t chunks, std::int64_t dim, Split split_fn,
                               SplitWithSizes split_with_sizes_fn) {
  PARITY_CHECK(x.dim() > 0, ErrorKind::Shape, "chunk expects at least a 1-dimensional tensor");
  PARITY_CHECK(chunks > 0, ErrorKind::Argument,
               "chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
  std::int64_t n = x.sizes()[wrap_dim(dim, x.dim())];
  std::int64_t split_size = wrapping_ceil_div(n, chunks);
  // split would return one piece of an empty dim; split_with_sizes keeps the number of chunks.
  if (split_size == 0 && n == 0) return split_with_sizes_fn(x, Dims(static_cast<std::size_t>(chunks), 0), dim);
  return split_fn(x, split_size, dim);
}
}  // namespace

std::vector<Tensor> split_with_sizes(const Tensor& x, const Dims& lengths, std::int64_t dim) {
  return make_multi_view(x, Derivative::SplitWithSizesBackward0, split_with_sizes_pieces(lengths, dim), dim, Joined::Cat);
}

std::vector<Tensor> unsafe_split_with_sizes(const Tensor& x, const Dims& lengths, std::int64_t dim) {
  return make_multi_view(x, Derivative::UnsafeSplitWithSizesBackward0, split_with_sizes_pieces(lengths, dim), dim, Joined::Cat,
                         /*views=*/false);
}

std::vector<Tensor> unsafe_split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  return make_multi_view(x, Derivative::UnsafeSplitBackward0, split_pieces_of_size(split_size, dim), dim, Joined::Cat,
                         /*views=*/false);
}

std::vector<Tensor> unsafe_chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  return chunk_with(x, chunks, dim, unsafe_split, unsafe_split_with_sizes);
}

Tensor view(const Tensor& x, const Dims& sizes) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::view(x.layout(), sizes, followed_release()); }, Derivative::ViewBackward0,
                   [in](const Tensor& g) { return reshape(g, in); });
}

Tensor reshape(const Tensor& x, const Dims& sizes) {
  // 2.x hands a contiguous input to view() as it is: the view op reads x's grad_fn before it checks the shape.
  if (follows(VersionGate::ReshapeContiguousIsView) && x.is_contiguous()) return view(x, sizes);
  Dims shape = infer_view_size(sizes, x.numel(), followed_release());
  Dims in = x.sizes();
  if (auto strides = view_strides(x.layout(), shape))
    return make_view_op(x, [&] { return Layout{shape, *strides, x.offset()}; }, Derivative::ReshapeAliasBackward0,
                     [in](const Tensor& g) { return reshape(g, in); });
  // Not viewable: a contiguous copy, reinterpreted (_unsafe_view, not a view for autograd).
  Tensor c = clone(x, MemoryFormat::Contiguous);
  Tensor out = autograd::make_alias(c, Layout::dense(shape));
  if (autograd::compute_requires_grad({&c}))
    autograd::set_history(out, make_node(Derivative::UnsafeViewBackward0, {&c}, [in](const Tensor& g, const TensorList&, const Formula&) {
                            return TensorList{reshape(g, in)};
                          }));
  return out;
}

Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1) {
  return make_view_op(x, [&] { return geometry::transpose(x.layout(), d0, d1); }, Derivative::TransposeBackward0,
                   [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}

Tensor permute(const Tensor& x, const Dims& dims) {
  return make_view_op(x, [&] { return geometry::permute(x.layout(), dims); }, Derivative::PermuteBackward0, [dims](const Tensor& g) {
    Dims inverse(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], g.dim())] = static_cast<std::int64_t>(i);
    return permute(g, inverse);
  });
}

Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::slice(x.layout(), dim, start, end, step); }, Derivative::SliceBackward0,
                   [in, dim, start, end, step](const Tensor& g) {
                     return backward_op(
                         Derivative::SliceBackwardBackward0, g,
                         [&] {
                           return single_view_backward(in, g, [&](const Layout& l) {
                             return geometry::slice(l, dim, start, end, step);
                           });
                         },
                         [=](const Tensor& gg) { return slice(gg, dim, start, end, step); });
                   });
}

Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::select(x.layout(), dim, index); }, Derivative::SelectBackward0, [in, dim, index](const Tensor& g) {
    return backward_op(
        Derivative::SelectBackwardBackward0, g,
        [&] { return single_view_backward(in, g, [&](const Layout& l) { return geometry::select(l, dim, index); }); },
        [=](const Tensor& gg) { return select(gg, dim, index); });
  });
}

Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length) {
  (void)geometry::narrow(x.layout(), dim, start, length, followed_release());  // narrow's own checks, before slice's
  std::int64_t n = x.sizes()[wrap_dim(dim, x.dim())];
  if (start != n) start = wrap_dim(start, n);
  return slice(x, dim, start, start + length, 1);
}

Tensor expand(const Tensor& x, const Dims& sizes) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::expand(x.layout(), sizes, x.type_name()); },
                   Derivative::ExpandBackward0, [in](const Tensor& g) { return sum_to(g, in); });
}

Tensor squeeze(const Tensor& x) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::squeeze(x.layout()); }, Derivative::SqueezeBackward0, [in](const Tensor& g) {
    Tensor r = g;
    for (std::size_t d = 0; d < in.size(); ++d)
      if (in[d] == 1) r = unsqueeze(r, static_cast<std::int64_t>(d));
    return r;
  });
}

Tensor squeeze(const Tensor& x, std::int64_t dim) {
  Dims in = x.sizes();
  return make_view_op(x, [&] { return geometry::squeeze(x.layout(), dim); }, Derivative::SqueezeBackward1, [in, dim](const Tensor& g) {
    std::int64_t d = wrap_dim(dim, static_cast<std::int64_t>(in.size()));
    return (!in.empty() && in[d] == 1) ? unsqueeze(g, d) : g;
  });
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  return make_view_op(x, [&] { return geometry::unsqueeze(x.layout(), dim); }, Derivative::UnsqueezeBackward0,
                   [dim](const Tensor& g) { return squeeze(g, dim); });
}

Tensor as_strided(const Tensor& x, const Dims& sizes, const Dims& strides, std::int64_t offset) {
  Layout in = x.layout();
  auto storage_numel = static_cast<std::int64_t>(x.storage().nbytes() / element_size(x.dtype()));
  return make_view_op(x, [&] { return geometry::as_strided(sizes, strides, offset, storage_numel, element_size(x.dtype()), followed_release()); },
                   Derivative::AsStridedBackward0, [in, sizes, strides, offset](const Tensor& g) {
                     return autograd::as_strided_backward(g, in, sizes, strides, offset);
                   });
}

Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  Dims in = x.sizes();
  auto diag = [offset, dim1, dim2](const Layout& l) { return geometry::diagonal(l, offset, dim1, dim2); };
  return make_view_op(x, [&] { return diag(x.layout()); }, Derivative::DiagonalBackward0, [in, diag, offset, dim1, dim2](const Tensor& g) {
    return backward_op(
        Derivative::DiagonalBackwardBackward0, g, [&] { return single_view_backward(in, g, diag); },
        [=](const Tensor& gg) { return diagonal(gg, offset, dim1, dim2); });
  });
}

Tensor t(const Tensor& x) {
  return make_view_op(x, [&] { return geometry::t(x.layout()); }, Derivative::TBackward0, [](const Tensor& g) { return t(g); });
}

Tensor unfold(const Tensor& x, std::int64_t dim, std::int64_t size, std::int64_t step) {
  Dims in = x.sizes();
  // Window i of an unfolded geometry (a 0-d input has a single window and no window dim).
  auto windows = [in, dim](const Layout& unfolded) {
    if (in.empty()) return std::vector<Layout>{unfolded};
    std::int64_t d = wrap_dim(dim, static_cast<std::int64_t>(in.size()));
    std::vector<Layout> out;
    for (std::int64_t i = 0; i < unfolded.sizes[d]; ++i) out.push_back(geometry::select(unfolded, d, i));
    return out;
  };
  auto storage_numel = static_cast<std::int64_t>(x.storage().nbytes() / element_size(x.dtype()));
  // LibTorch's unfold is an as_strided of the unfolded geometry: the same checks, against x's storage.
  auto checked = [&] {
    const TorchVersion release = followed_release();
    const Layout u = geometry::unfold(x.layout(), dim, size, step, release);
    return geometry::as_strided(u.sizes, u.strides, u.offset, storage_numel, element_size(x.dtype()), release);
  };
  return make_view_op(x, checked, Derivative::UnfoldBackward0,
                   [in, dim, size, step, windows](const Tensor& g) {
                     // Window i of the input takes window i of the gradient, summed where windows overlap.
                     auto value = [&] {
                       TensorList pieces;
                       for (const Layout& w : windows(g.layout())) pieces.push_back(autograd::make_alias(g, w));
                       auto slots = [&](const Layout& l) { return windows(geometry::unfold(l, dim, size, step, followed_release())); };
                       return view_backward(in, pieces, slots, /*accumulate=*/true);
                     };
                     return backward_op(Derivative::UnfoldBackwardBackward0, g, value,
                                        [=](const Tensor& gg) { return unfold(gg, dim, size, step); });
                   });
}

std::vector<Tensor> unbind(const Tensor& x, std::int64_t dim) {
  return make_multi_view(x, Derivative::UnbindBackward0, [dim](const Layout& l) {
    // size(dim) refuses a 0-d tensor that maybe_wrap_dim let through.
    std::int64_t d = wrap_dim(wrap_dim(dim, l.dim()), l.dim(), /*wrap_scalar=*/false);
    std::vector<Layout> out;
    for (std::int64_t i = 0; i < l.sizes[d]; ++i) out.push_back(geometry::select(l, d, i));
    return out;
  }, dim, Joined::Stack);
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  return make_multi_view(x, Derivative::SplitBackward0, split_pieces_of_size(split_size, dim), dim, Joined::Cat);
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  return chunk_with(x, chunks, dim, split, split_with_sizes);
}

}  // namespace parity::impl
