#include "judge/coverage.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace parity::judge {

using program::Attr;
using program::DType;
using program::is_floating;
using program::kAllDTypes;
using program::kAllMemoryFormats;
using program::op_table;
using program::OpId;
using program::OpKind;
using program::OpSpec;
using program::Program;
using program::ResultIs;
using program::Saves;
using program::spec;
using program::Step;

namespace {


// The names are part of the report (run.json) and of --require-coverage: keep them stable. "Written" means an
// in-place op with grad enabled that LibTorch ran (raising counts: a refused write is the situation too);
// operands are judged on their latest observation before the step.
#define PARITY_SITUATIONS(X)                                                                                     \
  X(InplaceOnViewOfNonleaf, "inplace_on_view_of_nonleaf")                   /* a view of a non-leaf written */   \
  X(InplaceOnViewOfLeafRequiringGrad, "inplace_on_view_of_leaf_requiring_grad")                                 \
  X(InplaceOnNogradViewWithGrad, "inplace_on_nograd_view_with_grad")        /* view made under no_grad */        \
  X(InplaceOnMultiOutputView, "inplace_on_multi_output_view")               /* unbind/split/chunk output */      \
  X(InplaceOnLeafRequiringGrad, "inplace_on_leaf_requiring_grad")                                               \
  X(ViewGradFnAfterBaseInplace, "view_grad_fn_after_base_inplace")  /* observed after its base/sibling written */\
  X(ViewOfView, "view_of_view")                                                                                 \
  X(DetachOfView, "detach_of_view")                                         /* detach or detach_ */              \
  X(DataOfTensor, "data_of_tensor")                                                                             \
  X(RequiresGradOnNonleafTrue, "requires_grad_on_nonleaf_true")                                                 \
  X(RequiresGradOnNonleafFalse, "requires_grad_on_nonleaf_false")                                               \
  X(RequiresGradOnInteger, "requires_grad_on_integer")                      /* requires_grad_ or a factory */    \
  X(GradOfNonleafUndefined, "grad_of_nonleaf_undefined")                    /* after an ok backward */           \
  X(GradOfRetainedNonleaf, "grad_of_retained_nonleaf")                                                          \
  X(GradModeNesting, "grad_mode_nesting")                                   /* grad, no_grad, grad again */      \
  X(InplaceOnSavedResult, "inplace_on_saved_result")                        /* then a backward */                \
  X(VersionError, "version_error")                                          /* a backward raised it */           \
  X(BackwardWithGradient, "backward_with_gradient")                                                             \
  X(BackwardSeveralRoots, "backward_several_roots")                         /* sharing a graph */                \
  X(GradOfUnusedInput, "grad_of_unused_input")                              /* allow_unused: no gradient */      \
  X(SecondBackwardAccumulates, "second_backward_accumulates")                                                   \
  X(RetainGraphThenBackward, "retain_graph_then_backward")                  /* over the same graph */            \
  X(DoubleBackward, "double_backward")               /* from a gradient a create_graph backward made */          \
  X(GraphFreedError, "graph_freed_error")                                                                       \
  X(LeafGradLayoutContiguous, "leaf_grad_layout_contiguous")                /* a leaf of that layout got a */    \
  X(LeafGradLayoutChannelsLast, "leaf_grad_layout_channels_last")           /* gradient in an ok backward  */    \
  X(LeafGradLayoutDenseNonContiguous, "leaf_grad_layout_dense_non_contiguous")                                  \
  X(LeafGradLayoutOverlapping, "leaf_grad_layout_overlapping")                                                  \
  X(CopyClone, "copy_clone")                                                /* copies: steps that ran ok */      \
  X(CopyDetachClone, "copy_detach_clone")                                                                       \
  X(CopyCloneDetach, "copy_clone_detach")                                                                       \
  X(CopyEmptyLikeCopy_, "copy_empty_like_copy_")                                                                \
  X(CopyToCopy, "copy_to_copy")                                                                                 \
  X(CopyNewTensor, "copy_new_tensor")                                                                           \
  X(CopyDeepcopy, "copy_deepcopy")                                                                              \
  X(DeepcopySharedStorage, "deepcopy_shared_storage")                       /* one memo, one storage */          \
  X(DeepcopyWithGrad, "deepcopy_with_grad")                                                                     \
  X(DeepcopyNonleafError, "deepcopy_nonleaf_error")                                                             \
  X(MmOneSideRequiresGrad, "mm_one_side_requires_grad")                     /* mm or matmul */                   \
  X(GradValueWrittenInPlace, "grad_value_written_in_place")   /* a `grad` step's value, e.g. grad.zero_() */     \
  X(GradAssigned, "grad_assigned")                                                                              \
  X(GradReset, "grad_reset")                                                                                    \
  X(OutResized, "out_resized")                              /* an ok out= step resized its out */

// An enum of an X-list and the names its report keys use, in the same order.
#define PARITY_ENUM_ENTRY(name, str) name,
#define PARITY_NAME_ENTRY(name, str) str,
#define PARITY_NAMED_ENUM(Enum, names, LIST)        \
  enum class Enum : std::size_t { LIST(PARITY_ENUM_ENTRY) }; \
  constexpr std::string_view names[] = {LIST(PARITY_NAME_ENTRY)};

PARITY_NAMED_ENUM(Situation, kSituationNames, PARITY_SITUATIONS)
constexpr std::size_t kSituationCount = std::size(kSituationNames);

constexpr std::string_view kOffset = "offset";

constexpr std::size_t kTensorEventCount = static_cast<std::size_t>(TensorEvent::Backward) + 1;

// The index of pair (a, b), a < b, in situation_pairs() order (row by row).
std::size_t pair_index(std::size_t a, std::size_t b) {
  std::size_t index = 0;
  for (std::size_t i = 0; i < a; ++i) index += kTensorEventCount - 1 - i;
  return index + (b - a - 1);
}

bool is_one_of(const Step& s, std::initializer_list<OpId> ops) {
  return std::find(ops.begin(), ops.end(), s.op) != ops.end();
}

bool writes_in_place(const OpSpec& op) { return op.is_inplace(); }

const TensorObs* find_value(const StepObs& so, int id) {
  for (const TensorObs& o : so.observed)
    if (o.value == id) return &o;
  return nullptr;
}

// What the program says about each value, followed step by step: which tensor it is, and whether it is a view.
struct Facts {
  int self = -1;              // the value that first held this tensor (-1: the value itself)
  int view_base = -1;         // a view's base, never itself a view (as in PyTorch); -1 when not a view
  bool multi_output = false;  // a view made by unbind/split/chunk, or a view of one
  bool nograd_view = false;   // a view made under no_grad of a tensor requiring grad, or a view of one
  bool alias = false;         // detach() or .data of another value: shares its storage outside autograd
};

// One pass over the program and LibTorch's trace. Operands are judged on their latest observation before the
// step; what a step did (gradients after a backward, grad_fn after a write) on the observations it made.
class Analysis {
 public:
  Analysis(const Program& p, const Trace& t)
      : p_(p),
        t_(t),
        n_(static_cast<int>(std::min(p.steps.size(), t.steps.size()))),
        facts_(static_cast<std::size_t>(n_)),
        latest_(static_cast<std::size_t>(n_), nullptr),
        had_grad_(static_cast<std::size_t>(n_), false),
        retained_(static_cast<std::size_t>(n_), false),
        saved_(static_cast<std::size_t>(n_), false),
        writes_(static_cast<std::size_t>(n_)),
        events_(static_cast<std::size_t>(n_), 0),
        pair_seen_(kTensorEventCount * (kTensorEventCount - 1) / 2, false),
        through_seen_(op_table().size(), false),
        op_operand_seen_(op_operand_keys().size(), false) {}

  CoverageTags run() {
    for (int i = 0; i < n_; ++i) step(i);
    for (std::size_t k = 0; k < kSituationCount; ++k)
      if (seen_[k]) tags_.situations.emplace_back(kSituationNames[k]);
    for (std::size_t k = 0; k < pair_seen_.size(); ++k)
      if (pair_seen_[k]) tags_.situation_pairs.push_back(situation_pairs()[k]);
    tags_.role_pairs = roles_.pairs();
    tags_.role_triples = roles_.triples();
    // Device-only ops are no coverage goal (backward_through_ops()): a CPU campaign never makes them.
    for (const OpSpec& op : op_table())
      if (through_seen_[static_cast<std::size_t>(op.id)] && !op.device_only) tags_.backward_through.emplace_back(op.name);
    for (std::size_t k = 0; k < op_operand_seen_.size(); ++k)
      if (op_operand_seen_[k]) tags_.op_operands.push_back(op_operand_names()[k]);
    return std::move(tags_);
  }

 private:
  struct Write {
    int step;
    int target;  // the tensor written (its self id)
  };
  struct Deepcopy {
    std::int64_t memo;
    int source;  // self id
    int alias_of;
    int grad_owner;  // the tensor whose .grad the source is, or -1
  };

  void add(Situation s) { seen_[static_cast<std::size_t>(s)] = true; }

  // The tensor a value is, for tensor events: its storage (alias class), as LibTorch last showed it.
  int tensor_of(int v) const {
    const TensorObs* o = v >= 0 ? latest(v) : nullptr;
    return o && o->alias_of >= 0 && o->alias_of < n_ ? o->alias_of : v;
  }

  void event(int v, TensorEvent e) {
    const int t = tensor_of(v);
    if (t < 0 || t >= n_) return;
    role_event(v, e);
    const auto bit = static_cast<std::size_t>(e);
    for (std::size_t other = 0; other < kTensorEventCount; ++other)
      if (other != bit && (events_[t] >> other) & 1u)
        pair_seen_[pair_index(std::min(other, bit), std::max(other, bit))] = true;
    events_[t] = static_cast<std::uint8_t>(events_[t] | (1u << bit));
  }

  void role_event(int v, TensorEvent e) {
    if (const int t = tensor_of(v); t >= 0 && t < n_) roles_.add(t, {e, role_of(v), self(v)});
  }

  // What made a tensor decides its role when it is no view; a copy that returned its operand is the operand.
  TensorRole role_of(int v) const {
    if (is_view(v)) return TensorRole::View;
    const Step& made = p_.steps[self(v)];
    if (made.op == OpId::Grad || made.op == OpId::AutogradGrad) return TensorRole::Grad;
    if (made.op == OpId::Deepcopy) return TensorRole::Deepcopy;
    if (spec(made.op).kind == OpKind::Copy && !facts_[self(v)].alias) return TensorRole::Copy;
    const TensorObs* o = latest(v);
    return o && !o->is_leaf ? TensorRole::Nonleaf : TensorRole::Leaf;
  }

  int self(int v) const { return v >= 0 && facts_[v].self >= 0 ? facts_[v].self : v; }
  bool is_view(int v) const { return v >= 0 && facts_[v].view_base >= 0; }
  // Views of one base share its storage and version counter: a write to any of them is a write to all.
  int family(int v) const { return is_view(v) ? facts_[v].view_base : self(v); }
  const TensorObs* latest(int v) const { return latest_[v]; }

  // run() skips such steps already; a hand-written trace might not.
  bool inputs_valid(const Step& s, int i) const {
    if (static_cast<int>(s.inputs.size()) != spec(s.op).arity) return false;
    return std::all_of(s.inputs.begin(), s.inputs.end(), [i](int in) { return in >= 0 && in < i; });
  }

  void step(int i) {
    const Step& s = p_.steps[i];
    const StepObs& so = t_.steps[i];
    if (so.status == StepObs::Status::Skipped || !inputs_valid(s, i)) return;
    const OpSpec& op = spec(s.op);
    const bool ok = so.status == StepObs::Status::Ok;
    track_grad_mode(s);
    if (ok) count_layouts_and_formats(s, op);
    on_operand_classes(s, op);
    if (writes_in_place(op)) on_inplace(i, s, ok);
    on_operands(s, op, ok, so);
    if (op.runs_backward) on_backward(i, s, so);
    if (ok && op.out_of && !s.inputs.empty()) {
      const TensorObs* before = latest(s.inputs[0]);
      const TensorObs* after = find_value(so, i);
      if (before && after && before->sizes != after->sizes) add(Situation::OutResized);
    }
    // Gradients with history: what a create_graph autograd.grad returns, a .grad read after a create_graph backward.
    if (ok && ((s.op == OpId::AutogradGrad && s.attrs.create_graph) || (s.op == OpId::Grad && create_graph_ran_)))
      recorded_grads_.push_back(i);
    if (ok && !op.no_value) {
      if (const TensorObs* r = find_value(so, i)) tags_.dtypes.emplace_back(to_string(r->dtype));
      facts_[i] = facts_of_result(i, s, op, so);
      on_saved(i, s, op, so);
      if (op.saves == Saves::Result) saved_[family(i)] = true;  // writing it before backward breaks it
      if (op.kind == OpKind::View && is_view(i) && is_view(s.inputs[0])) add(Situation::ViewOfView);
    }
    if (ok && op.runs_backward) judge_gradients(so);
    for (const TensorObs& o : so.observed) {
      if (o.value < 0 || o.value > i) continue;
      latest_[o.value] = &o;
      // Only a backward step observes gradients: other steps say nothing about them.
      if (op.runs_backward) had_grad_[o.value] = o.grad.has_value();
    }
    judge_views_after_writes(so, i);
  }

  void track_grad_mode(const Step& s) {
    if (s.grad_enabled && grad_phase_ == 2) add(Situation::GradModeNesting);
    if (s.grad_enabled && grad_phase_ == 0) grad_phase_ = 1;
    if (!s.grad_enabled && grad_phase_ == 1) grad_phase_ = 2;
  }

  void count_layouts_and_formats(const Step& s, const OpSpec& op) {
    for (int in : s.inputs) {
      const TensorObs* o = latest(in);
      if (!o) continue;
      tags_.layouts.emplace_back(layout_kind(*o));
      if (o->offset > 0) tags_.layouts.emplace_back(kOffset);
    }
    if (op.reads(Attr::MemoryFormat)) tags_.memory_formats.emplace_back(to_string(s.attrs.memory_format));
  }

  // Autograd checks an in-place op only with grad enabled; a refused write (an error) is still the situation.
  void on_inplace(int i, const Step& s, bool ok) {
    const int target = s.inputs[0];
    const Facts& f = facts_[target];
    if (s.grad_enabled) {
      if (is_view(target)) {
        const TensorObs* base = latest(f.view_base);
        if (f.nograd_view) add(Situation::InplaceOnNogradViewWithGrad);
        else if (base && base->requires_grad)
          add(base->is_leaf ? Situation::InplaceOnViewOfLeafRequiringGrad : Situation::InplaceOnViewOfNonleaf);
        if (f.multi_output) add(Situation::InplaceOnMultiOutputView);
      } else if (const TensorObs* o = latest(target); o && o->requires_grad && o->is_leaf) {
        add(Situation::InplaceOnLeafRequiringGrad);
      }
    }
    if (f.nograd_view) event(target, TensorEvent::WriteViaNogradView);
    else if (f.alias) event(target, TensorEvent::WriteViaAlias);
    else if (s.grad_enabled) event(target, is_view(target) ? TensorEvent::WriteViaView : TensorEvent::WriteOnTensor);
    if (!ok) return;  // nothing was written
    writes_[family(target)].push_back({i, self(target)});
    if (const TensorObs* o = latest(target); saved_[family(target)] && o && o->requires_grad)
      saved_result_written_ = true;
  }

  void on_operands(const Step& s, const OpSpec& op, bool ok, const StepObs& so) {
    const int in0 = s.inputs.empty() ? -1 : s.inputs[0];
    const TensorObs* o0 = in0 >= 0 ? latest(in0) : nullptr;
    if ((s.op == OpId::Detach || s.op == OpId::Detach_) && is_view(in0)) add(Situation::DetachOfView);
    if (ok && is_one_of(s, {OpId::Data})) add(Situation::DataOfTensor);
    if (ok && s.op == OpId::RetainGrad) {
      retained_[self(in0)] = true;
      event(in0, TensorEvent::RetainGrad);
    }
    if (ok && s.op == OpId::SetGrad) add(Situation::GradAssigned);
    if (ok && s.op == OpId::ResetGrad) add(Situation::GradReset);
    if (ok && op.is_inplace() && p_.steps[self(in0)].op == OpId::Grad) add(Situation::GradValueWrittenInPlace);
    if (op.reads(Attr::RequiresGrad)) on_requires_grad(s, op, o0);
    if (is_one_of(s, {OpId::Mm, OpId::Matmul}) && ok && s.inputs.size() == 2) {
      const TensorObs* o1 = latest(s.inputs[1]);
      if (o0 && o1 && o0->requires_grad != o1->requires_grad) add(Situation::MmOneSideRequiresGrad);
    }
    if (is_one_of(s, {OpId::Deepcopy})) on_deepcopy(s, ok, so);
    if (ok) on_copy(s);
  }

  // The situations the step's operands are in (judge/operand_class.h), judged before it ran: a refused step met
  // them too.
  void on_operand_classes(const Step& s, const OpSpec& op) {
    auto meet = [&](OperandClass c) {
      if (const auto at = op_operand_index({s.op, c})) op_operand_seen_[*at] = true;
    };
    const TensorObs* o0 = s.inputs.empty() ? nullptr : latest(s.inputs[0]);
    for (std::size_t k = 0; k < s.inputs.size(); ++k) {
      const TensorObs* o = latest(s.inputs[k]);
      if (!o) continue;
      if (o->is_view && o->version > 0) meet(OperandClass::ViewWritten);
      if (grad_owner(s.inputs[k]) >= 0) meet(OperandClass::GradOperand);
      if (k == 0 || !o0) continue;
      if ((op.is_inplace() || op.out_of) && o->alias_of == o0->alias_of) meet(OperandClass::SharedStorage);
      if (o->sizes.empty() && o->dtype != o0->dtype) meet(OperandClass::ZeroDimOther);
    }
    if (op.reads(Attr::Scalar) && program::is_edge_scalar(s.attrs.scalar.value)) meet(OperandClass::EdgeScalar);
    if (s.op == OpId::Deepcopy && o0) {
      const int source = self(s.inputs[0]);
      for (const Deepcopy& d : deepcopies_) {
        if (d.memo != s.attrs.memo) continue;
        if (d.source != source && d.alias_of == o0->alias_of) meet(OperandClass::MemoStorage);
        if (grad_owner(s.inputs[0]) == d.source || d.grad_owner == source) meet(OperandClass::MemoGrad);
      }
    }
  }

  // The tensor whose .grad value `v` is (a grad step read it), or -1.
  int grad_owner(int v) const {
    const Step& made = p_.steps[self(v)];
    return made.op == OpId::Grad && !made.inputs.empty() ? self(made.inputs[0]) : -1;
  }

  // requires_grad_ on a tensor, or requires_grad=True on a factory: a refusal is the situation too.
  void on_requires_grad(const Step& s, const OpSpec& op, const TensorObs* operand) {
    if (operand && !operand->is_leaf)
      add(s.attrs.requires_grad ? Situation::RequiresGradOnNonleafTrue : Situation::RequiresGradOnNonleafFalse);
    std::optional<DType> dtype;
    if (op.reads(Attr::DType)) dtype = s.attrs.dtype;
    else if (operand) dtype = operand->dtype;
    if (s.attrs.requires_grad && dtype && !is_floating(*dtype)) add(Situation::RequiresGradOnInteger);
  }

  void on_copy(const Step& s) {
    auto made_by = [&](int v, OpId op) { return p_.steps[v].op == op; };
    if (s.op == OpId::Clone) {
      add(Situation::CopyClone);
      if (made_by(s.inputs[0], OpId::Detach)) add(Situation::CopyDetachClone);
    }
    if (s.op == OpId::Detach && made_by(s.inputs[0], OpId::Clone)) add(Situation::CopyCloneDetach);
    if (s.op == OpId::Copy_) {
      // empty_like(src).copy_(src): the usual way to copy keeping the layout.
      const Step& dst = p_.steps[self(s.inputs[0])];
      if (dst.op == OpId::EmptyLike && dst.inputs.size() == 1 && self(dst.inputs[0]) == self(s.inputs[1]))
        add(Situation::CopyEmptyLikeCopy_);
    }
    if (program::spec(s.op).kind == program::OpKind::Copy && program::spec(s.op).reads(program::Attr::DType) &&
        s.attrs.copy)
      add(Situation::CopyToCopy);
    if (is_one_of(s, {OpId::NewTensor})) add(Situation::CopyNewTensor);
  }

  void on_deepcopy(const Step& s, bool ok, const StepObs& so) {
    const int in0 = s.inputs[0];
    const TensorObs* o = latest(in0);
    if (!ok) {
      if (so.status == StepObs::Status::Error && o && !o->is_leaf) add(Situation::DeepcopyNonleafError);
      return;
    }
    add(Situation::CopyDeepcopy);
    if (o && o->is_leaf && had_grad_[in0]) add(Situation::DeepcopyWithGrad);
    const std::int64_t memo = s.attrs.memo;
    if (!o) return;
    // One tensor copied twice is the tensor memo; distinct tensors over one storage are the storage memo.
    for (const Deepcopy& d : deepcopies_)
      if (d.memo == memo && d.source != self(in0) && d.alias_of == o->alias_of) add(Situation::DeepcopySharedStorage);
    deepcopies_.push_back({memo, self(in0), o->alias_of, grad_owner(in0)});
  }

  // An op that joined the graph saved what its derivative reads: that tensor must not change before backward.
  void on_saved(int i, const Step& s, const OpSpec& op, const StepObs& so) {
    const TensorObs* result = find_value(so, i);
    if (!s.grad_enabled || !result || !result->requires_grad) return;
    switch (op.saves) {
      case Saves::Nothing: break;
      case Saves::Self: event(s.inputs[0], TensorEvent::Saved); break;
      case Saves::Result: event(i, TensorEvent::Saved); break;
      case Saves::Operands:
        for (int in : s.inputs) event(in, TensorEvent::Saved);
        break;
      case Saves::Others:
        for (std::size_t k = 1; k < s.inputs.size(); ++k) event(s.inputs[k], TensorEvent::Saved);
        break;
      case Saves::Operand1: event(s.inputs.at(1), TensorEvent::Saved); break;
    }
  }

  // The values a backward from `root` went through: each tensor in its graph has a backward event, each op whose
  // result required grad there had its derivative run, and a gradient with history there makes it a double
  // backward.
  void on_backward_through(int root) {
    const std::vector<bool> graph = ancestors(root);
    for (int g : recorded_grads_)
      if (graph[static_cast<std::size_t>(g)]) add(Situation::DoubleBackward);
    std::vector<bool> tensor_done(static_cast<std::size_t>(n_), false);
    for (int v = 0; v < n_; ++v) {
      const TensorObs* o = graph[v] ? latest(v) : nullptr;
      if (!o || !o->requires_grad) continue;
      if (const int t = tensor_of(v); t >= 0 && t < n_ && !tensor_done[t]) {
        tensor_done[t] = true;
        event(v, TensorEvent::Backward);
      }
      role_event(v, TensorEvent::Backward);  // each tensor of the storage in the graph, in its role
      const OpSpec& made_by = spec(p_.steps[v].op);
      if (!o->is_leaf && program::records_history(made_by)) through_seen_[static_cast<std::size_t>(made_by.id)] = true;
    }
  }

  void on_backward(int i, const Step& s, const StepObs& so) {
    if (saved_result_written_) add(Situation::InplaceOnSavedResult);
    if (so.status == StepObs::Status::Error) {
      if (so.category == ErrorCategory::VersionMismatch) add(Situation::VersionError);
      if (so.category == ErrorCategory::GraphFreed) add(Situation::GraphFreedError);
    }
    if (so.status != StepObs::Status::Ok) return;
    if (s.attrs.create_graph) create_graph_ran_ = true;
    const OpSpec& op = spec(s.op);
    if (op.gradient >= 0) add(Situation::BackwardWithGradient);
    if (op.roots > 1 && share_graph(s.inputs[0], s.inputs[1])) add(Situation::BackwardSeveralRoots);
    if (op.has_value() && s.attrs.allow_unused && !find_value(so, i)) add(Situation::GradOfUnusedInput);
    for (int k = 0; k < op.roots; ++k) {
      const int root = s.inputs[static_cast<std::size_t>(k)];
      on_backward_through(root);
      for (int r : retained_roots_)
        if (share_graph(r, root)) add(Situation::RetainGraphThenBackward);
      if (s.attrs.retain_graph) retained_roots_.push_back(root);
    }
  }

  // Two roots share a graph when some value both were computed from is a node of it (not a leaf).
  bool share_graph(int a, int b) const {
    std::vector<bool> of_a = ancestors(a), of_b = ancestors(b);
    for (int v = 0; v < n_; ++v)
      if (of_a[v] && of_b[v] && latest(v) && !latest(v)->is_leaf) return true;
    return false;
  }

  std::vector<bool> ancestors(int v) const {
    std::vector<bool> seen(static_cast<std::size_t>(n_), false);
    std::vector<int> stack = {v};
    while (!stack.empty()) {
      int u = stack.back();
      stack.pop_back();
      if (u < 0 || u >= n_ || seen[u]) continue;
      seen[u] = true;
      for (int in : p_.steps[u].inputs)
        if (in < u) stack.push_back(in);
    }
    return seen;
  }

  void judge_gradients(const StepObs& so) {
    for (const TensorObs& o : so.observed) {
      if (o.value < 0 || o.value >= n_) continue;
      if (!o.is_leaf) {
        if (o.requires_grad && !o.grad) add(Situation::GradOfNonleafUndefined);
        if (o.grad && retained_[self(o.value)]) add(Situation::GradOfRetainedNonleaf);
        continue;
      }
      if (!o.grad) continue;
      if (had_grad_[o.value]) add(Situation::SecondBackwardAccumulates);
      std::string_view kind = layout_kind(o);
      if (kind == "contiguous") add(Situation::LeafGradLayoutContiguous);
      if (kind == "channels_last") add(Situation::LeafGradLayoutChannelsLast);
      if (kind == "dense_non_contiguous") add(Situation::LeafGradLayoutDenseNonContiguous);
      if (kind == "overlapping") add(Situation::LeafGradLayoutOverlapping);
    }
  }

  // Reading a view's grad_fn after its base (or a sibling view) was written regenerates its history.
  void judge_views_after_writes(const StepObs& so, int i) {
    for (const TensorObs& o : so.observed) {
      if (o.value < 0 || o.value > i || !o.requires_grad || !is_view(o.value)) continue;
      const int born = self(o.value);
      for (const Write& w : writes_[family(o.value)])
        if (w.step > born && w.target != born) add(Situation::ViewGradFnAfterBaseInplace);
    }
  }

  Facts facts_of_result(int i, const Step& s, const OpSpec& op, const StepObs& so) const {
    Facts f;
    if (s.inputs.empty()) return f;
    const int in0 = s.inputs[0];
    const TensorObs* operand = latest(in0);
    const TensorObs* result = find_value(so, i);
    const bool unobserved = !operand || !result;
    const bool same_storage = !unobserved && operand->alias_of == result->alias_of;
    // contiguous() and to() return their operand itself when it already fits, and a fresh copy otherwise.
    const bool may_return_operand = op.result == ResultIs::OperandIfNoOp;
    if (op.result == ResultIs::Operand || (may_return_operand && same_storage)) {
      f = facts_[in0];
      f.self = self(in0);
      return f;
    }
    if (op.result == ResultIs::Alias) {
      f.alias = true;
      return f;
    }
    if (op.result == ResultIs::UnsafeAlias) return f;  // its own tensor to autograd, over the operand's memory
    // reshape copies when no view can express the result: only a result sharing the storage is a view.
    if (op.kind != OpKind::View || (!unobserved && !same_storage)) return f;
    const Facts& b = facts_[in0];
    f.alias = b.alias;
    f.view_base = family(in0);
    f.multi_output = b.multi_output || op.multi_output;
    f.nograd_view = b.nograd_view || (!s.grad_enabled && operand && operand->requires_grad);
    return f;
  }

  const Program& p_;
  const Trace& t_;
  const int n_;
  std::vector<Facts> facts_;
  std::vector<const TensorObs*> latest_;
  std::vector<bool> had_grad_;  // by value: a gradient was defined at the latest backward observation
  std::vector<bool> retained_;  // by tensor (self id): retain_grad succeeded on it
  std::vector<bool> saved_;     // by family: holds a result saved for backward (exp, sigmoid, ...)
  std::vector<std::vector<Write>> writes_;  // by family: in-place writes that succeeded
  std::vector<std::uint8_t> events_;  // per tensor (alias class): the TensorEvents that happened to it
  std::vector<bool> pair_seen_;       // per situation_pairs() index
  RoleCombinations roles_;
  std::vector<bool> through_seen_;    // per OpId
  std::vector<bool> op_operand_seen_;  // per op_operand_keys() index
  std::vector<int> retained_roots_;         // roots of ok backward calls with retain_graph
  bool create_graph_ran_ = false;           // an ok backward recorded itself
  std::vector<int> recorded_grads_;         // values that are gradients with history (DoubleBackward)
  std::vector<Deepcopy> deepcopies_;
  bool saved_result_written_ = false;
  int grad_phase_ = 0;  // 0: nothing yet, 1: a grad-enabled step, 2: then a no_grad step
  std::array<bool, kSituationCount> seen_{};
  CoverageTags tags_;
};

std::vector<std::string> names_of(std::initializer_list<std::string_view> names) {
  return {names.begin(), names.end()};
}

// The report names of every value of a vocabulary enum, in its kAll... order.
template <typename E, std::size_t N>
std::vector<std::string> names_of(const E (&all)[N]) {
  std::vector<std::string> out;
  for (E e : all) out.emplace_back(to_string(e));
  return out;
}

}  // namespace

CoverageTags coverage_tags(const Program& program, const Trace& oracle) { return Analysis(program, oracle).run(); }

std::string_view layout_kind(const TensorObs& o) {
  if (o.sizes.empty()) return "zero_dim";
  if (std::find(o.sizes.begin(), o.sizes.end(), 0) != o.sizes.end()) return "empty";
  for (std::size_t d = 0; d < o.sizes.size() && d < o.strides.size(); ++d)
    if (o.sizes[d] > 1 && o.strides[d] == 0) return "overlapping";
  if (o.contiguous) return "contiguous";
  if (o.channels_last) return "channels_last";
  if (o.channels_last_3d) return "channels_last_3d";
  if (o.non_overlapping_dense) return "dense_non_contiguous";
  return "non_dense";
}

const std::vector<std::string>& all_situations() {
  static const std::vector<std::string> names(std::begin(kSituationNames), std::end(kSituationNames));
  return names;
}

const std::vector<std::string>& layout_kinds() {
  static const std::vector<std::string> names =
      names_of({"zero_dim", "empty", "contiguous", "channels_last", "channels_last_3d", "dense_non_contiguous",
                "non_dense", "overlapping", kOffset});
  return names;
}

const std::vector<std::string>& memory_format_names() {
  static const std::vector<std::string> names = names_of(kAllMemoryFormats);
  return names;
}

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const OpSpec& op : op_table())
      if (!op.device_only) out.emplace_back(op.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& expected_error_categories() {
  static const std::vector<std::string> names = [] {
    // Device errors need a second device: only campaigns on cuda (`parity fuzz --device cuda`) can reach them.
    constexpr ErrorCategory kNotGoals[] = {ErrorCategory::Crash,          ErrorCategory::Timeout,
                                           ErrorCategory::OutOfMemory,    ErrorCategory::InternalAssert,
                                           ErrorCategory::Unclassified,   ErrorCategory::Device};
    constexpr ErrorCategory kAll[] = {
#define PARITY_CATEGORY_ENUM(name, str) ErrorCategory::name,
        PARITY_ERROR_CATEGORIES(PARITY_CATEGORY_ENUM)
#undef PARITY_CATEGORY_ENUM
    };
    std::vector<std::string> out;
    for (ErrorCategory c : kAll)
      if (std::find(std::begin(kNotGoals), std::end(kNotGoals), c) == std::end(kNotGoals))
        out.emplace_back(to_string(c));
    return out;
  }();
  return names;
}

const std::vector<std::string>& situation_pairs() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (std::size_t a = 0; a < kTensorEventCount; ++a)
      for (std::size_t b = a + 1; b < kTensorEventCount; ++b)
        out.push_back(tensor_events()[a] + "+" + tensor_events()[b]);
    return out;
  }();
  return names;
}

const std::vector<std::string>& backward_through_ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const OpSpec& op : op_table())
      if (program::records_history(op) && !op.device_only) out.emplace_back(op.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = names_of(kAllDTypes);
  return names;
}

const std::vector<CoverageDimension>& coverage_dimensions() {
  static const std::vector<CoverageDimension> dims = {
      {"ops", op_names()},
      {"layouts", layout_kinds()},
      {"memory_formats", memory_format_names()},
      {"dtypes", dtype_names()},
      {"error_categories", expected_error_categories()},
      {"situations", all_situations()},
      {"situation_pairs", situation_pairs()},
      {"backward_through", backward_through_ops()},
      {"role_pairs", role_pair_goals()},
      {"role_triples", role_triple_goals()},
      {"op_operands", {}},
  };
  return dims;
}

}  // namespace parity::judge
