#include "impl/autograd/functions.h"

#include <algorithm>
#include <numeric>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/ops.h"
#include "impl/version_gate.h"

namespace parity::impl::autograd {

TensorList Formula::apply(TensorList&& grads) {
  // Saved tensors are unpacked first, as in PyTorch's generated nodes: a stale or freed one raises even when
  // no gradient flows.
  TensorList saved(saved_.size());
  if (saved_.size() > 1 && follows(VersionGate::SavedUnpackByName)) {
    std::vector<std::size_t> order(saved_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return saved_names_[a] < saved_names_[b]; });
    for (std::size_t i : order) saved[i] = saved_[i].unpack(*this);
  } else {
    for (std::size_t i = 0; i < saved_.size(); ++i) saved[i] = saved_[i].unpack(*this);
  }
  const Tensor& g = grads.empty() ? Tensor() : grads[0];
  if (!g.defined()) return TensorList(next_edges().size());
  return fn_(g, saved, *this);
}

void Formula::save(std::string_view name, const Tensor& t, bool is_output) {
  const std::size_t at = saved_position(derivative_, name);
  PARITY_INTERNAL_ASSERT(at >= next_save_, std::string(derivative(derivative_).name) + " saves \"" + std::string(name) +
                                               "\" out of the order impl/autograd/derivatives.def lists");
  next_save_ = at + 1;
  saved_.emplace_back(t, is_output);
  saved_names_.push_back(derivative(derivative_).saved[at]);
}

void Formula::release_variables() {
  for (auto& s : saved_) s.release();
}

TensorList MultiOutputFormula::apply(TensorList&& grads) {
  for (const auto& g : grads)
    if (g.defined()) return fn_(grads);
  return TensorList(next_edges().size());
}

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : Node(UINT64_MAX), leaf_(leaf.shared()) {
  add_input_metadata(leaf);
}

namespace {
// The gradient layout contract (torch/csrc/autograd/utils/grad_layout_contract.h). It compares the strides of
// grad's dims of size > 1, by index, and a gradient has more dims than a leaf whose rank shrank since its graph
// was made (set_data, an out=): there LibTorch reads the leaf's stale stride slots (Tensor::stride_slot), which
// still hold its strides from before, so a gradient laid out as the leaf was is taken as it is. Past the slots it
// reads outside c10's array, which no model predicts: the gradient is copied.
bool obeys_layout_contract(const Tensor& grad, const Tensor& var) {
  if (var.is_non_overlapping_and_dense()) {
    for (std::size_t i = 0; i < grad.sizes().size(); ++i) {
      if (grad.sizes()[i] != 1) {
        const std::optional<std::int64_t> slot = var.stride_slot(i);
        if (!slot || grad.strides()[i] != *slot) return false;
      } else if (grad.strides()[i] == 0) {
        return false;
      }
    }
    return true;
  }
  return grad.is_contiguous();
}

Tensor clone_obey_contract(const Tensor& grad, const Tensor& var) {
  // 1.13: new_empty_strided with the variable's options, its dtype too, which set_data may have changed since
  // the accumulator (and the gradient's dtype) were fixed. 2.x: the gradient's (VersionGate::GradCopyKeepsGradDtype).
  if (var.is_non_overlapping_and_dense())
    return copy_(empty_strided(var.sizes(), var.strides(),
                               follows(VersionGate::GradCopyKeepsGradDtype) ? grad.dtype() : var.dtype(),
                               grad.device()),
                 grad);
  return clone(grad, MemoryFormat::Contiguous);
}
}  // namespace

TensorList AccumulateGrad::apply(TensorList&& grads) {
  if (grads.empty() || !grads[0].defined()) return {};
  auto impl = leaf_.lock();
  if (!impl) return {};
  Tensor var(impl);
  if (grad_fn(var))
    fail(ErrorKind::Argument, "leaf variable has been moved into the graph interior", moved_leaf_error_class());
  if (!requires_grad(var)) return {};
  Tensor new_grad = std::move(grads[0]);
  auto& m = materialize(var);
  // AccumulateGrad::accumulateGrad. Under create_graph (grad mode on) nothing is stolen or written in place: the
  // copy and the sum record history, so .grad has a grad_fn (CopyBackwards, AddBackward0) and a later backward
  // through it reaches the first one's graph.
  const bool recording = grad_mode_enabled();
  if (!m.grad.defined()) {
    // Steal the incoming gradient when nothing else refers to it and it already has the leaf's layout.
    if (!recording && new_grad.use_count() <= 1 && obeys_layout_contract(new_grad, var))
      m.grad = detach(new_grad);
    else
      m.grad = clone_obey_contract(new_grad, var);
  } else if (!recording) {
    add_(m.grad, new_grad);
  } else {
    m.grad = add(m.grad, new_grad);
  }
  return {};
}

CopySlices::CopySlices(const Tensor& base, const Layout& view, Rc<Node> fn)
    : base_(base.layout()), view_(view), fn_(std::move(fn)) {
  add_input_metadata(base);
  add_next_edge(gradient_edge(base));
  for (std::size_t i = 1; i < fn_->next_edges().size(); ++i) add_next_edge(fn_->next_edges()[i]);
}

TensorList CopySlices::apply(TensorList&& grads) {
  const Tensor& grad = grads[0];
  if (!grad.defined()) return TensorList(next_edges().size());
  if (fn_ == nullptr) fail(ErrorKind::GraphFreed, kBackwardTwiceMessage, plain_runtime_error_class());
  Tensor result = copy_(empty_strided(base_.sizes, base_.strides, grad.dtype(), grad.device()), grad);
  Tensor grad_slice = as_strided(result, view_.sizes, view_.strides,
                                 result.offset() + view_.offset - base_.offset);
  // LibTorch 1.13 marks every next node of its op needed; 2.x (VersionGate::CopySlicesMarksFirstEdgeOnly) only
  // the op's first, when the task has no entry for it and needs CopySlices' own first output (Note [View +
  // Inplace update for view tensor]): a leaf the op read but nothing asks for is then left alone.
  if (ExecInfo* info = current_exec_info()) {
    if (!follows(VersionGate::CopySlicesMarksFirstEdgeOnly)) {
      for (const Edge& e : fn_->next_edges())
        if (e.valid()) info->mark_needed(e.fn.get());
    } else if (!fn_->next_edges().empty()) {
      const Edge& e = fn_->next_edges().front();
      if (e.valid() && !info->should_execute(e.fn.get()) && task_should_compute_output(0))
        info->mark_needed(e.fn.get());
    }
  }
  TensorList res = fn_->apply({clone(grad_slice, MemoryFormat::Contiguous)});
  TensorList out(next_edges().size());
  // 2.x asks the task, which may not need the op's first output (it was not marked), and skips a gradient the
  // op did not compute.
  const bool first_edge_only = follows(VersionGate::CopySlicesMarksFirstEdgeOnly);
  for (std::size_t i = 0; i < res.size() && i < out.size(); ++i) {
    if (first_edge_only ? !task_should_compute_output(i) || !res[i].defined() : !should_compute_output(i)) continue;
    if (i == 0) {
      copy_(grad_slice, res[0]);
      out[0] = result;
    } else {
      out[i] = res[i];
    }
  }
  return out;
}

namespace {
// _maybe_overlapping_memory (FunctionsManual.cpp): a cheap test that may say yes for memory that does not overlap.
bool maybe_overlapping(const Dims& sizes, const Dims& strides) {
  std::vector<std::size_t> order(sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return strides[i] < strides[j]; });
  std::int64_t max_index = 0;
  for (std::size_t i : order) {
    if (strides[i] <= max_index) return true;
    max_index += strides[i] * (sizes[i] - 1);
  }
  return false;
}
}  // namespace

Tensor as_strided_backward(const Tensor& grad, const Layout& input, const Dims& sizes, const Dims& strides,
                           std::int64_t offset) {
  // LibTorch's as_strided_backward (FunctionsManual.cpp), op for op: under create_graph its result has history
  // wherever the gradient does (through the squeezes and sums, the scatter, the division and the final view), and
  // the in-place ops it runs on the storage it returns bump that storage's version, which .grad shows. It is a
  // plain function, not an op, so what it calls goes through the ADInplaceOrView key: at::zeros and new_zeros
  // count their own zero_ (in 1.13; 2.x's do not, VersionGate::FactoriesCountNoZero). An empty geometry gives
  // zeros, at version 1 in 2.15 as in 1.13.
  const bool zeros_count = !follows(VersionGate::FactoriesCountNoZero);
  auto empty_result = [&] {
    Tensor z = zeros(input.sizes, grad.dtype(), false, grad.device());
    z.bump_version();
    return z;
  };
  // The output geometry without its size-1 dims (squeezed from the gradient) and its stride-0 dims (summed).
  Tensor g = grad;
  Dims out_sizes, out_strides;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return empty_result();
    if (sizes[i] == 1) {
      g = squeeze(g, static_cast<std::int64_t>(i));
    } else if (strides[i] == 0) {
      g = sum(g, {static_cast<std::int64_t>(i)}, false);
    } else {
      out_sizes.insert(out_sizes.begin(), sizes[i]);
      out_strides.insert(out_strides.begin(), strides[i]);
    }
  }
  Dims in_sizes, in_strides;
  for (std::size_t i = 0; i < input.sizes.size(); ++i) {
    if (input.sizes[i] == 0) return empty_result();
    if (input.sizes[i] != 1) in_sizes.push_back(input.sizes[i]), in_strides.push_back(input.strides[i]);
  }
  const bool out_may_overlap = maybe_overlapping(out_sizes, out_strides);
  const bool in_may_overlap = maybe_overlapping(in_sizes, in_strides);
  // The storage both geometries reach, from the lower of their offsets.
  const std::int64_t origin = std::min(input.offset, offset);
  const Layout out_geo{out_sizes, out_strides, offset - origin};
  const Layout in_geo{in_sizes, in_strides, input.offset - origin};
  const std::int64_t extent = std::max(in_geo.storage_extent(), out_geo.storage_extent());
  Tensor storage = zeros({extent}, grad.dtype(), false, grad.device());
  if (zeros_count) storage.bump_version();  // new_zeros
  // Scatter the gradient by the output geometry: a copy where no element is reached twice, else an accumulating
  // write (LibTorch's index_add_ over arange's offsets; index_put_ adds in the same order, in the same dtype).
  // The offsets are made once, as LibTorch's flatten_full_indices, for either geometry that may overlap.
  const Tensor all_offsets =
      out_may_overlap || in_may_overlap ? arange(extent, ScalarType::Int64, grad.device()) : Tensor();
  auto offsets_of = [&](const Layout& geo) {
    return reshape(as_strided(all_offsets, geo.sizes, geo.strides, geo.offset), {-1});
  };
  if (out_may_overlap)
    index_put_(storage, offsets_of(out_geo), reshape(g, {-1}), /*accumulate=*/true);
  else
    copy_(as_strided(storage, out_geo.sizes, out_geo.strides, out_geo.offset), g);
  // Where the input geometry may use an element several times (the cheap test), divide each by its uses: outside
  // the input's reach that is x / 0, a NaN or an infinity the storage keeps.
  if (in_may_overlap) {
    Tensor count = zeros({extent}, grad.dtype(), false, grad.device());
    const Tensor in_offsets = offsets_of(in_geo);
    const Tensor one = full({1}, Scalar::of(1), grad.dtype(), false, grad.device());
    index_put_(count, in_offsets, expand(one, in_offsets.sizes()), /*accumulate=*/true);
    div_(storage, count);
  }
  return as_strided(storage, input.sizes, input.strides, input.offset - origin);
}

Rc<Node> make_as_strided_backward(const Tensor& base, const Layout& view) {
  Layout input = base.layout();
  auto fn = make_rc<Formula>(Derivative::AsStridedBackward0, [input, view](const Tensor& g, const TensorList&, const Formula&) {
    return TensorList{as_strided_backward(g, input, view.sizes, view.strides, view.offset)};
  });
  fn->set_next_edges(collect_next_edges({&base}));
  fn->add_input_metadata(Tensor::over(base.storage(), view, base.dtype(), base.version_counter()));
  return fn;
}

}  // namespace parity::impl::autograd
