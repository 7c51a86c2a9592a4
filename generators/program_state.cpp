#include "generators/program_state.h"

#include <algorithm>

#include "generators/strides.h"
#include "program/json.h"
#include "program/internal_assert.h"

namespace parity::generators {

using program::Meta;
using program::OpKind;
using program::Step;

namespace {

using program::ResultIs;

// to() without a dtype change or copy=true is the operand itself.
bool returns_operand(const program::OpSpec& op, const Step& step, const Meta& in) {
  return op.result == ResultIs::OperandIfNoOp && op.is_noop && op.is_noop(in, step.attrs);
}

}  // namespace

std::optional<Meta> ProgramState::infer(const Step& step, StepInfo& info) const {
  const program::OpSpec& op = program::spec(step.op);
  info.inputs_ok = static_cast<int>(step.inputs.size()) == op.arity;
  std::vector<Meta> metas;
  for (int in : step.inputs) {
    if (!live(in)) {
      info.inputs_ok = false;
      break;
    }
    metas.push_back(*value(in).meta);
  }
  if (!info.inputs_ok) return std::nullopt;
  info.undefined = op.undefined && op.undefined(metas, step.attrs);
  // A saved masked_fill mask given non-bool data: LibTorch 1.13's MaskedFillBackward0 reads those bytes as bools
  // (its masked_fill checks no dtype), so what backward computes, or raises, depends on the bytes.
  if (step.op == program::OpId::SetData && value(step.inputs[0]).saved_mask && metas[1].dtype != program::DType::Bool)
    info.undefined = true;
  // Tensor.__deepcopy__'s memo keys storages by address (storage._cdata) and keeps none alive: after set_data
  // freed a storage, a new one may take its address and hit a copy made for the old one, as the allocator
  // decides. A memo used before a set_data is not used again.
  if (step.op == program::OpId::Deepcopy && stale_memos_.contains(step.attrs.memo)) info.undefined = true;
  // An index whose entries no program fixes (randn_like's samples, converted): which elements it picks, and
  // whether one is out of range, differ between the backends as their samples do.
  if ((step.op == program::OpId::Index || step.op == program::OpId::IndexPut_) && value(step.inputs[1]).contents_unknown)
    info.undefined = true;
  // An output of unsafe_split or unsafe_chunk other than the first, whose grad is retained, written in place
  // through a view: LibTorch 2.x corrupts memory (a later grad segfaults, or raises "tensor does not have a
  // device"). Written directly, it fails an INTERNAL ASSERT instead, deterministically: that is generated, and
  // the known-divergences ledger has it.
  if (program::spec(step.op).is_inplace()) {
    const ValueInfo& target = value(step.inputs[0]);
    if (target.view && target.base >= 0 && value(target.base).unsafe_output && value(target.base).retains_grad)
      info.undefined = true;
  }
  // An integer index into a cuda tensor: LibTorch checks its entries on the device, where one out of range fails
  // a device-side assert that leaves the process's CUDA context unusable, for both backends and every later case
  // of that worker. Such an index is used only where its entries are known to be in range.
  if ((step.op == program::OpId::Index || step.op == program::OpId::IndexPut_) &&
      value(step.inputs[0]).device == program::Device::CUDA && !program::is_floating(metas[1].dtype) &&
      metas[1].dtype != program::DType::Bool) {
    const ValueInfo& index = value(step.inputs[1]);
    if (index.index_below < 0 || metas[0].sizes.empty() || index.index_below > metas[0].sizes[0])
      info.undefined = true;
  }
  auto out = op.infer(metas, step.attrs);
  info.table_ok = out.has_value();
  // A result past the element cap makes a program the JSON reader refuses, and a case must replay (a worker
  // reads it as JSON): near-cap factories (draw_sizes) must not grow past it.
  if (out && !program::within_numel_limit(out->sizes)) info.undefined = true;
  return out;
}

bool ProgramState::raises(const Step& step) const {
  const program::OpSpec& op = program::spec(step.op);
  if (step.inputs.empty()) return false;
  const ValueInfo& v = value(step.inputs[0]);
  if (op.is_inplace()) {
    bool any_rg = false;
    for (int in : step.inputs) any_rg = any_rg || value(in).meta->requires_grad;
    if (op.out_of) {
      if (step.grad_enabled && any_rg && program::out_refuses_grad(op)) return true;
      // TensorIterator resizes only a write-only out: one that is also an input must have the result's shape.
      for (std::size_t k = 1; k < step.inputs.size(); ++k)
        if (value(step.inputs[k]).tensor == v.tensor) {
          std::vector<Meta> in;
          for (std::size_t j = 1; j < step.inputs.size(); ++j) in.push_back(*value(step.inputs[j]).meta);
          const auto result = program::spec(*op.out_of).infer(in, step.attrs);
          if (result && result->sizes != v.meta->sizes) return true;
        }
    }
    // An out= form never checks its out as an in-place op checks self: it records no history.
    if (step.grad_enabled && any_rg && !op.out_of) {
      if (v.nograd_view || v.multi_output_view) return true;
      if (v.meta->requires_grad && v.leaf) return true;
      if (v.view && value(v.base).meta && value(v.base).meta->requires_grad && value(v.base).leaf) return true;
    }
    if (v.overlapping && !program::writes_one_value(op.writes)) return true;
  }
  return op.refuses && op.refuses({v.leaf, v.view, v.storage_numel}, step.attrs);
}

StepInfo ProgramState::check(const Step& step) const {
  StepInfo info;
  if (infer(step, info) && info.table_ok) info.raises = raises(step);
  return info;
}

// Unknown contents spread to what is computed from them: from operands `from`.. (1: what an in-place op writes
// into operand 0). A factory reads no contents (zeros_like of unknown ones is known).
bool ProgramState::unknown_contents(const Step& step, std::size_t from) const {
  const program::OpSpec& op = program::spec(step.op);
  if (op.values_undefined || op.kind == OpKind::Factory) return op.values_undefined;
  for (std::size_t k = from; k < step.inputs.size(); ++k)
    if (value(step.inputs[k]).contents_unknown) return true;
  return false;
}

// A write in place may change the entries of every tensor sharing its memory, which is not tracked here: none is
// known to be an index any more, and a write of unknown contents may make any of them unknown.
void ProgramState::forget_entries(bool written_unknown) {
  for (ValueInfo& x : values_) {
    x.index_below = -1;
    x.contents_unknown = x.contents_unknown || written_unknown;
  }
}

StepInfo ProgramState::append(const Step& step) {
  StepInfo info;
  auto out = infer(step, info);
  if (out) info.raises = raises(step);
  const program::OpSpec& op = program::spec(step.op);
  ValueInfo v;
  if (info.expected_ok()) note_grads(step);
  if (info.expected_ok() && step.op == program::OpId::SetData) {
    take_data(step);
    stale_memos_.insert(used_memos_.begin(), used_memos_.end());
  }
  if (info.expected_ok() && step.op == program::OpId::Deepcopy) used_memos_.insert(step.attrs.memo);
  if (info.expected_ok() && (step.op == program::OpId::MaskedFill || step.op == program::OpId::MaskedFill_) && step.grad_enabled &&
      value(step.inputs[0]).meta->requires_grad) {
    const int mask = value(step.inputs[1]).tensor;
    for (ValueInfo& x : values_)
      if (x.tensor == mask) x.saved_mask = true;
  }
  const bool no_grad_to_read = op.result == ResultIs::Grad && info.expected_ok() && !value(step.inputs[0]).has_grad;
  if (!info.expected_ok() || op.no_value || no_grad_to_read) {
    values_.push_back(v);
    return info;
  }
  Meta meta = *out;
  const ValueInfo* in0 = step.inputs.empty() ? nullptr : &value(step.inputs[0]);
  const bool sets_requires_grad = op.reads(program::Attr::RequiresGrad);  // factories, requires_grad_
  // Under no_grad nothing new joins the graph: only factories and flag setters make tensors requiring grad,
  // in-place ops keep their operand's flag, and a view still reports its base's flag (LibTorch: a view made
  // under no_grad of a tensor requiring grad has requires_grad true and is_leaf true).
  if (!step.grad_enabled && op.kind != OpKind::Factory && !sets_requires_grad)
    meta.requires_grad = op.is_inplace() || op.kind == OpKind::View || returns_operand(op, step, *in0->meta)
                             ? in0->meta->requires_grad
                             : false;

  switch (op.result) {
    case ResultIs::Fresh:
      v.storage_numel = meta.numel();
      if (op.reads(program::Attr::Strided))  // rand: a layout within a storage of its own
        v.storage_numel = program::storage_extent(step.attrs.sizes, step.attrs.strides, step.attrs.offset);
      break;
    case ResultIs::View:
    case ResultIs::ViewOrCopy:
    case ResultIs::ExpandedView:
      v = *in0;
      v.view = true;
      v.base = in0->view ? in0->base : step.inputs[0];
      v.nograd_view = in0->nograd_view || (!step.grad_enabled && in0->meta->requires_grad);
      if (op.multi_output && step.grad_enabled) v.multi_output_view = true;
      if (op.result == ResultIs::ViewOrCopy) v.storage_numel = std::min(v.storage_numel, meta.numel());
      break;
    case ResultIs::Alias:
    case ResultIs::Operand:
      v = *in0;
      // An alias sharing storage that autograd does not see as a view (detach, .data), and detach_'s operand,
      // which stops being one.
      if (op.result == ResultIs::Alias || op.kind == OpKind::Copy) {
        v.view = false;
        v.base = -1;
        v.nograd_view = false;
        v.multi_output_view = false;
      }
      break;
    case ResultIs::OperandIfNoOp:
      if (returns_operand(op, step, *in0->meta)) v = *in0;
      else v.storage_numel = meta.numel();
      break;
    case ResultIs::Grad:
      v.storage_numel = meta.numel();
      meta.requires_grad = in0->grad_has_history;  // a gradient with history is no leaf (is_leaf below)
      break;
    case ResultIs::UnsafeAlias:
      // Operand 0's memory, but a tensor of its own to autograd: no view, no multi-output restriction.
      v = *in0;
      v.unsafe_output = step.attrs.index != 0;
      v.view = false;
      v.base = -1;
      v.nograd_view = false;
      v.multi_output_view = false;
      break;
    case ResultIs::Nothing:
      PARITY_HARNESS_UNREACHABLE(std::string(op.name) + " returns no value but a value was recorded");
  }
  // Which tensor object it is: operand 0 itself for the ops that return it, else a new one.
  const bool returns_self = op.result == ResultIs::Operand ||
                            (op.result == ResultIs::OperandIfNoOp && returns_operand(op, step, *in0->meta));
  v.tensor = returns_self ? in0->tensor : static_cast<int>(values_.size());
  if (op.overlaps) {
    const bool own = op.overlaps(in0 ? *in0->meta : Meta{}, meta, step.attrs);
    // A layout given in full (rand, as_strided) overlaps or not by itself; other views keep their base's overlap.
    v.overlapping = op.reads(program::Attr::Strided) ? own : v.overlapping || own;
  }
  v.meta = meta;
  if (op.reads(program::Attr::Device)) v.device = step.attrs.device;
  else if (op.reads(program::Attr::LikeDevice)) v.device = step.attrs.like_device.value_or(in0->device);
  else if (in0) v.device = in0->device;
  if (!returns_self) v.contents_unknown = unknown_contents(step, /*from=*/0);
  // Views keep the entries they show (copied with *in0 above); any other result is not known to be an index.
  if (step.op == program::OpId::Arange && !program::is_floating(meta.dtype)) v.index_below = step.attrs.end;
  else if (op.result != ResultIs::View && op.result != ResultIs::ViewOrCopy && op.result != ResultIs::ExpandedView &&
           op.result != ResultIs::Alias)
    v.index_below = -1;
  // A tensor that does not require grad is a leaf; one that requires grad is a leaf only if it was made so
  // (a factory, requires_grad_ on a leaf) or stays the leaf it was (in-place under no_grad).
  const bool self_result = op.result == ResultIs::Operand;
  if (!meta.requires_grad || op.leaf_result) v.leaf = true;
  else if (returns_operand(op, step, *in0->meta)) v.leaf = in0->leaf;
  else if (self_result && in0->meta->requires_grad) v.leaf = in0->leaf;
  else if (self_result && sets_requires_grad) v.leaf = in0->leaf;
  else if (op.kind == OpKind::View && !step.grad_enabled) v.leaf = true;
  else v.leaf = false;
  values_.push_back(v);

  if (op.is_inplace() || step.op == program::OpId::SetData) forget_entries(unknown_contents(step, /*from=*/1));
  if (self_result) {
    // The operand is the same tensor: it changes with the result.
    ValueInfo& self = values_[static_cast<std::size_t>(step.inputs[0])];
    self.meta = v.meta;
    self.leaf = v.leaf;
    // In-place on a view with grad flowing in rebases the base's history (CopySlices).
    if (op.is_inplace() && self.view && meta.requires_grad && step.grad_enabled) {
      ValueInfo& base = values_[static_cast<std::size_t>(self.base)];
      if (base.meta && !base.meta->requires_grad) {
        base.meta->requires_grad = true;
        base.leaf = false;
      }
    }
  }
  return info;
}

// Which values hold a gradient after a step that succeeds: a backward fills every leaf requiring grad and every
// retained non-leaf (all of them, not only those its graph reaches: a guess), set_grad and reset_grad say.
void ProgramState::note_grads(const Step& step) {
  using program::OpId;
  if (program::spec(step.op).runs_backward) {
    if (program::spec(step.op).has_value()) return;  // autograd.grad returns its gradient, accumulating none
    for (auto& v : values_)
      if (v.meta && v.meta->requires_grad && (v.leaf || v.retains_grad)) {
        v.has_grad = true;
        v.grad_has_history = v.grad_has_history || step.attrs.create_graph;
      }
    return;
  }
  if (step.inputs.empty()) return;
  ValueInfo& x = values_[static_cast<std::size_t>(step.inputs[0])];
  if (step.op == OpId::RetainGrad) x.retains_grad = true;
  // A .grad writer assigns its second operand, or resets the gradient when it has none.
  if (program::spec(step.op).writes_grad) {
    x.has_grad = step.inputs.size() > 1;
    x.grad_has_history = x.has_grad && value(step.inputs[1]).meta->requires_grad;
  }
}

// set_data: operand 0 takes operand 1's storage, shape and dtype, under every id the tensor has (an in-place
// op's result is its operand); its autograd state (flag, leaf, view) stays.
void ProgramState::take_data(const Step& step) {
  const int tensor = value(step.inputs[0]).tensor;
  const ValueInfo data = value(step.inputs[1]);
  for (ValueInfo& x : values_) {
    if (!x.meta || x.tensor != tensor) continue;
    x.meta->sizes = data.meta->sizes;
    x.meta->dtype = data.meta->dtype;
    x.storage_numel = data.storage_numel;
    x.overlapping = data.overlapping;
  }
}

std::vector<StepInfo> analyze(const program::Program& p) {
  ProgramState state;
  std::vector<StepInfo> out;
  out.reserve(p.steps.size());
  for (const auto& s : p.steps) out.push_back(state.append(s));
  return out;
}

bool well_formed(const program::Program& p, std::string* why) {
  auto fail = [&](std::size_t i, const std::string& msg) {
    if (why) *why = "step " + std::to_string(i) + ": " + msg;
    return false;
  };
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    if (static_cast<std::size_t>(s.op) >= program::op_table().size()) return fail(i, "unknown op");
    const program::OpSpec& op = program::spec(s.op);
    if (static_cast<int>(s.inputs.size()) != op.arity)
      return fail(i, std::string(op.name) + " takes " + std::to_string(op.arity) + " inputs, has " +
                         std::to_string(s.inputs.size()));
    for (int in : s.inputs) {
      if (in < 0 || static_cast<std::size_t>(in) >= i) return fail(i, "input " + std::to_string(in) + " is not an earlier step");
      if (program::spec(p.steps[static_cast<std::size_t>(in)].op).no_value)
        return fail(i, "input " + std::to_string(in) + " returns no value");
    }
  }
  return true;
}

}  // namespace parity::generators
