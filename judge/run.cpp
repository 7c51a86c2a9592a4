#include "judge/backend.h"

#include <algorithm>
#include <optional>

#include "judge/schema_check.h"
#include "program/internal_assert.h"

namespace parity::judge {

using program::has_internal_overlap;
using program::layouts_share_memory;
using program::InternalError;
using program::OpId;
using program::OpKind;
using program::OpSpec;
using program::Program;
using program::ResultIs;
using program::Saves;
using program::spec;
using program::Step;
using program::Writes;
using program::overlap_is_order_dependent;

std::string_view to_string(StepObs::Status s) {
  switch (s) {
    case StepObs::Status::Ok: return "ok";
    case StepObs::Status::Error: return "error";
    case StepObs::Status::Skipped: return "skipped";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

namespace {

// Which values hold uninitialised memory (from empty/empty_like, or written through overlapping memory): their
// contents, and anything computed from them, differ between runs of the same backend, so only their metadata
// is compared. A full overwrite (copy_, fill_, zero_ of a dense tensor) makes a value defined again.
//
// Gradients are tainted only where an undefined value can reach them: a backward whose gradient argument is
// undefined taints every gradient it computes; a node whose derivative reads an undefined value (what the op
// saves, as the op table says) taints the gradients upstream of it. Every other gradient is still compared.
class Taint {
 public:
  explicit Taint(std::size_t n)
      : tainted_(n, false),
        grad_tainted_(n, false),
        history_(n),
        reads_(n),
        read_undefined_copy_(n, false),
        derivative_undefined_(n, false) {}
  bool values_defined(int id) const { return !tainted_[id]; }
  bool grad_defined(int id) const { return !grad_tainted_[id]; }

  // Called after an in-place step raised. Most raise before writing anything, and then nothing changed; only an
  // op that checks while it writes (OpSpec::checks_while_writing: index_put_ meeting an out-of-range index) has
  // written part of its destination, and when that write was undefined (overlapping memory), so is that part.
  // A backward that raised midway (a freed graph) has already run the nodes before it: a root's retained grad holds
  // what reached it, as after a backward that completed.
  void update_after_raise(const Step& step, int index, ErrorCategory category, Session& session) {
    if (spec(step.op).runs_backward) {
      backward(step, index, session);
      return;
    }
    if (!spec(step.op).checks_while_writing || category != ErrorCategory::IndexRange) return;
    // What it wrote before it raised is undefined where the write is, or where what it wrote was.
    bool wrote_undefined = false;
    for (std::size_t k = 1; k < step.inputs.size(); ++k) wrote_undefined = wrote_undefined || tainted_[step.inputs[k]];
    if (session.has_value(step.inputs.at(0)) &&
        (wrote_undefined || write_is_undefined(step, session) || repeated_index_write(step, session)))
      taint_aliases(step.inputs[0], index, session);
  }

  // Called before a step runs: an out= form may resize its out, and a shrunk out keeps, past its new elements, the
  // storage it had (as_strided reads it), so the write does not make it defined.
  void before(const Step& step, Session& session) {
    out_numel_before_.reset();
    if (!spec(step.op).out_of || !session.has_value(step.inputs.at(0))) return;
    out_numel_before_ = session.values(step.inputs[0]).size();  // not observe(): reading grad_fn may change it
  }

  // Called after a step succeeded and before anything is observed.
  void update(const Step& step, int index, Session& session) {
    update_values(step, index, session);
    // A result that is a tensor the program already holds (an op returning its operand, autograd.grad handing a
    // grad_outputs tensor back) has that tensor's .grad.
    if (!session.has_value(index)) return;
    const void* tensor = session.tensor_key(index);
    for (int j = 0; j < index; ++j)
      if (session.has_value(j) && session.tensor_key(j) == tensor && grad_tainted_[j]) grad_tainted_[index] = true;
  }

  void update_values(const Step& step, int index, Session& session) {
    const OpSpec& op = spec(step.op);
    if (op.runs_backward) {
      backward(step, index, session);
      if (!op.has_value()) return;
      // autograd.grad's result is the gradient that reached its operand 1; under create_graph its history is the
      // graph it came through, whose saved values a backward from it reads (its operands over-approximate it).
      tainted_[index] = grad_tainted_[step.inputs.at(1)];
      record_history(step, index, session);
      return;
    }
    // .grad as a value: reading it gives what the gradient holds; assigning makes the gradient what was assigned.
    // Every id of the tensor (an in-place op's result is its operand under another id) has that .grad.
    // A .grad writer with a second operand assigns it (set_grad); with none it resets (reset_grad).
    if (op.writes_grad) {
      const bool undefined = step.inputs.size() > 1 && tainted_[step.inputs[1]];
      const void* tensor = session.tensor_key(step.inputs[0]);
      for (int j = 0; j < index; ++j)
        if (session.has_value(j) && session.tensor_key(j) == tensor) grad_tainted_[j] = undefined;
      return;
    }
    // set_data: the tensor, under every id it has, now holds its operand 1's values, defined or not.
    // A tensor that is some tensor's .grad is that gradient.
    if (step.op == OpId::SetData) {
      const void* tensor = session.tensor_key(step.inputs[0]);
      for (int j = 0; j < index; ++j) {
        if (!session.has_value(j)) continue;
        if (session.tensor_key(j) == tensor) tainted_[j] = tainted_[step.inputs[1]];
        if (session.grad_tensor_key(j) == tensor) grad_tainted_[j] = tainted_[step.inputs[1]];
      }
      return;
    }
    record_history(step, index, session);
    if (op.result == ResultIs::Grad) {
      tainted_[index] = grad_tainted_[step.inputs[0]];
      return;
    }
    if (write_is_undefined(step, session)) {
      taint_aliases(step.inputs[0], index, session);
      // Its backward writes the gradient through the same overlapping geometry (CopySlices copies the output's
      // gradient into a buffer laid out as the base, then into the view): what reaches the operands is undefined.
      derivative_undefined_[index] = true;
      return;
    }
    // Which of its values lands is undefined, but its derivative (grad.index of the indices) is not.
    if (repeated_index_write(step, session)) {
      taint_aliases(step.inputs[0], index, session);
      return;
    }
    // deepcopy copies .grad too: the copy's gradient is as defined as the original's.
    if (step.op == OpId::Deepcopy) grad_tainted_[index] = grad_tainted_[step.inputs[0]];
    bool in_tainted = false;
    for (int in : step.inputs) in_tainted = in_tainted || tainted_[in];
    // A view reaching past its operand's elements reads whatever its storage holds there: an empty narrow that
    // fill_ made defined still sits on a storage whose other elements are undefined.
    if (op.reads_storage && session.has_value(step.inputs.at(0))) {
      const void* key = session.storage_key(step.inputs[0]);
      for (int j = 0; j < index; ++j)
        in_tainted = in_tainted || (session.has_value(j) && session.storage_key(j) == key && tainted_[j]);
    }
    // Every logical element of the destination is written, whatever its strides.
    bool overwrite = op.is_inplace() && (op.writes == Writes::Constant ||
                                         (op.writes == Writes::Operand1 && !tainted_[step.inputs[1]]) ||
                                         (op.writes == Writes::Result &&
                                          std::none_of(step.inputs.begin() + 1, step.inputs.end(),
                                                       [&](int in) { return tainted_[in]; })));
    if (overwrite && out_numel_before_) overwrite = session.values(index).size() >= *out_numel_before_;
    if (overwrite) {
      tainted_[step.inputs[0]] = false;
      tainted_[index] = false;
      return;
    }
    if (op.values_undefined) {
      tainted_[index] = true;
      return;
    }
    if (!in_tainted) return;
    tainted_[index] = true;
    if (op.mutates && !step.inputs.empty()) taint_aliases(step.inputs[0], index, session);
  }

 private:
  // Node `index` of the history graph: what its result was computed from, and what its derivative reads.
  // An in-place write becomes part of the history of every alias of what it writes (a view's write rebases its
  // base, CopySlices), so those edges over-approximate autograd's graph, which only costs comparisons.
  void record_history(const Step& step, int index, const Session& session) {
    const OpSpec& op = spec(step.op);
    if (op.result != ResultIs::Alias) history_[index] = step.inputs;  // detach and .data cut the graph
    switch (op.saves) {
      case Saves::Nothing: break;
      case Saves::Self:
        // An in-place form saves a copy of self as it was: what it held then is what backward reads.
        if (op.is_inplace()) read_undefined_copy_[index] = tainted_[step.inputs.at(0)];
        else reads_[index] = {step.inputs.at(0)};
        break;
      case Saves::Result: reads_[index] = {index}; break;
      case Saves::Operands:
        // An in-place form's self is, again, a copy of what it held (mul_'s and div_'s other's derivative).
        if (op.is_inplace()) {
          read_undefined_copy_[index] = tainted_[step.inputs.at(0)];
          reads_[index].assign(step.inputs.begin() + 1, step.inputs.end());
        } else {
          reads_[index] = step.inputs;
        }
        break;
      case Saves::Others: reads_[index].assign(step.inputs.begin() + 1, step.inputs.end()); break;
      case Saves::Operand1: reads_[index] = {step.inputs.at(1)}; break;
    }
    if (op.mutates && op.is_inplace()) {
      const void* key = session.storage_key(step.inputs[0]);
      for (int j = 0; j < index; ++j)
        if (session.has_value(j) && session.storage_key(j) == key) history_[j].push_back(index);
    }
  }

  bool reads_undefined(int node) const {
    if (read_undefined_copy_[node] || derivative_undefined_[node]) return true;
    for (int r : reads_[node])
      if (tainted_[r]) return true;
    return false;
  }

  // Every node `from` depends on, itself included.
  std::vector<bool> upstream(int from) const {
    std::vector<bool> seen(history_.size(), false);
    std::vector<int> pending{from};
    seen[from] = true;
    while (!pending.empty()) {
      const int v = pending.back();
      pending.pop_back();
      for (int u : history_[v])
        if (!seen[u]) seen[u] = true, pending.push_back(u);
    }
    return seen;
  }

  void backward(const Step& step, int index, Session& session) {
    const OpSpec& op = spec(step.op);
    std::vector<bool> graph = upstream(step.inputs.at(0));
    for (int r = 1; r < op.roots; ++r) {
      const std::vector<bool> more = upstream(step.inputs.at(static_cast<std::size_t>(r)));
      for (std::size_t v = 0; v < graph.size(); ++v) graph[v] = graph[v] || more[v];
    }
    // backward(gradient) and autograd.grad's grad_outputs seed the root with a program value.
    const bool seed_undefined = op.gradient >= 0 && tainted_[step.inputs.at(static_cast<std::size_t>(op.gradient))];
    for (std::size_t v = 0; v < graph.size(); ++v) {
      if (!graph[v]) continue;
      if (seed_undefined) grad_tainted_[v] = true;
      if (grad_overlaps(static_cast<int>(v), index, session)) {
        grad_tainted_[v] = true;
        const void* key = session.grad_storage_key(static_cast<int>(v));
        for (int j = 0; j <= index; ++j)  // the tensor assigned as that .grad, and its aliases
          if (session.has_value(j) && session.storage_key(j) == key) tainted_[j] = true;
      }
      if (!reads_undefined(static_cast<int>(v))) continue;
      const std::vector<bool> below = upstream(static_cast<int>(v));
      for (std::size_t u = 0; u < below.size(); ++u)
        if (below[u]) grad_tainted_[u] = true;
    }
    // A gradient is the tensor's, whatever id names it (an op that returned its operand, to() asking for nothing).
    // An undefined gradient accumulated into a .grad the program assigned (AccumulateGrad adds in place) makes
    // what the program holds in that memory undefined too.
    for (int v = 0; v < index; ++v) {
      if (!grad_tainted_[v] || !session.has_value(v)) continue;
      const void* tensor = session.tensor_key(v);
      for (int j = 0; j < index; ++j)
        if (session.has_value(j) && session.tensor_key(j) == tensor) grad_tainted_[j] = true;
      if (!graph[static_cast<std::size_t>(v)]) continue;
      if (const void* key = session.grad_storage_key(v))
        for (int j = 0; j < index; ++j)
          if (session.has_value(j) && session.storage_key(j) == key) tainted_[j] = true;
    }
  }

  // AccumulateGrad adds into an existing .grad in place: when that gradient's elements share memory, the sum
  // depends on the order of the writes, which PyTorch leaves undefined. The engine makes only dense gradients, so
  // only an assigned one can overlap, and an assigned gradient is a program value: its layout is that value's
  // (read without the gradient's values, which observing `v` would copy).
  static bool grad_overlaps(int v, int index, Session& session) {
    if (v > index || !session.has_value(v)) return false;
    const void* grad = session.grad_tensor_key(v);
    if (!grad) return false;
    for (int j = 0; j <= index; ++j)
      if (session.has_value(j) && session.tensor_key(j) == grad) {
        const TensorObs g = session.observe(j, false, false);
        return !g.non_overlapping_dense && has_internal_overlap(g.sizes, g.strides);
      }
    return false;
  }

  // The write reaches every alias of the written value, and a gradient living in that memory (AccumulateGrad
  // stole a gradient the program still holds).
  void taint_aliases(int written, int index, const Session& session) {
    const void* key = session.storage_key(written);
    for (int j = 0; j <= index; ++j) {
      if (!session.has_value(j)) continue;
      if (session.storage_key(j) == key) tainted_[j] = true;
      if (session.grad_storage_key(j) == key) grad_tainted_[j] = true;
    }
  }

  // PyTorch leaves an in-place result undefined when elements overlap in ways it cannot prove cheaply (it
  // only rejects zero strides and partial overlap of dense tensors, MemOverlap and MemOverlapStatus): a
  // destination whose elements share memory, or an operand reaching the destination's memory in another layout.
  // The values then depend on iteration order. Two views of one storage whose elements are disjoint (narrow's
  // two halves) are as defined as two tensors.
  static bool write_is_undefined(const Step& step, Session& session) {
    if (spec(step.op).kind != OpKind::InPlace) return false;
    const int out = step.inputs[0];
    const TensorObs dst = session.observe(out, false, false);
    // fill_, zero_ and (on the CPU) masked_fill_ write one value everywhere they write, so overlap cannot change
    // what they leave; a dense destination has no overlap, and only the others need the exact (enumerating) check.
    if (overlap_is_order_dependent(spec(step.op).writes, dst.device != "cpu") && !dst.non_overlapping_dense &&
        has_internal_overlap(dst.sizes, dst.strides))
      return true;
    // Pointwise ops read each operand at the element they write, so an operand laid out as the destination is
    // safe; one that gathers (OpSpec::gathers) makes any shared memory order-dependent.
    for (std::size_t k = 1; k < step.inputs.size(); ++k) {
      const int in = step.inputs[k];
      if (out == in || session.storage_key(out) != session.storage_key(in)) continue;
      const TensorObs src = session.observe(in, false, false);
      const bool same_layout = dst.sizes == src.sizes && dst.strides == src.strides && dst.offset == src.offset;
      if (same_layout && !spec(step.op).gathers) continue;
      // No op of a program reinterprets a storage as another dtype, so element offsets compare directly; a
      // backend that shows two dtypes over one storage is not trusted to have disjoint ones.
      if (dst.dtype != src.dtype) return true;
      if (layouts_share_memory(dst.sizes, dst.strides, dst.offset, src.sizes, src.strides, src.offset)) return true;
    }
    return false;
  }

  // index_put_ without accumulate into cuda memory through an index that names an element twice: LibTorch
  // leaves which value lands undefined ("If accumulate is False and indices contain duplicates, the behavior is
  // undefined"), and its CUDA kernel writes them in parallel, so neither side's values are compared. The CPU's
  // kernel writes in order, the last one landing, which both sides model: compared there.
  static bool repeated_index_write(const Step& step, Session& session) {
    if (step.op != OpId::IndexPut_ || step.attrs.accumulate || step.inputs.size() < 2) return false;
    const int self = step.inputs[0], index = step.inputs[1];
    if (!session.has_value(self) || !session.has_value(index)) return false;
    const TensorObs dst = session.observe(self, false, false);
    const TensorObs idx = session.observe(index, false, false);
    // A mask never repeats an element.
    if (dst.device == "cpu" || idx.dtype == program::DType::Bool || dst.sizes.empty()) return false;
    const auto size = static_cast<double>(dst.sizes[0]);
    std::vector<double> at = session.values(index);
    for (double& v : at)
      if (v < 0) v += size;
    std::sort(at.begin(), at.end());
    return std::adjacent_find(at.begin(), at.end()) != at.end();
  }

  std::vector<bool> tainted_;
  std::vector<bool> grad_tainted_;
  std::vector<std::vector<int>> history_;  // node -> the nodes its value was computed from
  std::vector<std::vector<int>> reads_;    // node -> the values its derivative reads
  std::vector<bool> read_undefined_copy_;  // node -> it saved a copy of a value while that was undefined
  std::vector<bool> derivative_undefined_;  // node -> its derivative writes through overlapping memory
  std::optional<std::size_t> out_numel_before_;  // before() of an out= step: its out's element count
};

// The smallest live value id (up to `upto`) whose `key_of` is `key`; -1 when none.
template <typename KeyOf>
int first_value_with(const Session& session, int upto, const void* key, KeyOf key_of) {
  for (int j = 0; j <= upto; ++j)
    if (session.has_value(j) && key_of(j) == key) return j;
  return -1;
}

// Per value, the gradient tensor it last had and how often that changed: `.grad` identity across steps.
class GradHistory {
 public:
  explicit GradHistory(std::size_t n) : last_(n, nullptr), replaced_(n, 0) {}
  int note(int id, const void* key) {
    if (key && last_[id] && key != last_[id]) ++replaced_[id];
    if (key) last_[id] = key;
    return replaced_[id];
  }

 private:
  std::vector<const void*> last_;
  std::vector<int> replaced_;
};

void observe(Session& session, const Taint& taint, GradHistory& grads, KeepValues keep, int upto, int id,
             bool with_grad, StepObs& out) {
  TensorObs obs = session.observe(id, taint.values_defined(id), with_grad);
  obs.value = id;
  obs.values_defined = taint.values_defined(id);
  if (obs.grad && !taint.grad_defined(id)) obs.grad->values.clear();
  // Summarised as soon as read: the trace never holds more than one large tensor's values at a time.
  if (keep == KeepValues::SummariseLarge) {
    obs.summary = summarise_if_large(obs.values);
    if (obs.grad) obs.grad->summary = summarise_if_large(obs.grad->values);
  }
  auto storage = [&](int j) { return session.storage_key(j); };
  auto tensor = [&](int j) { return session.tensor_key(j); };
  obs.alias_of = first_value_with(session, upto, session.storage_key(id), storage);
  obs.same_as = first_value_with(session, upto, session.tensor_key(id), tensor);
  if (obs.grad) {
    // Whether the gradient is a program value's memory (AccumulateGrad stole a gradient the user still holds),
    // or a program value itself (a `grad` step read it).
    if (const void* grad_storage = session.grad_storage_key(id)) {
      obs.grad->alias_of = first_value_with(session, upto, grad_storage, storage);
      obs.grad->grad_alias_of =
          first_value_with(session, upto, grad_storage, [&](int j) { return session.grad_storage_key(j); });
    }
    const void* grad_tensor = session.grad_tensor_key(id);
    if (grad_tensor) obs.grad->same_as = first_value_with(session, upto, grad_tensor, tensor);
    obs.grad->replaced = grads.note(id, grad_tensor);
  }
  const void* base = session.base_key(id);
  obs.is_view = base != nullptr;
  obs.base = -1;
  if (base) {
    obs.base = first_value_with(session, upto, base, tensor);
    if (obs.base < 0) obs.base = kBaseNotAValue;
  }
  out.observed.push_back(std::move(obs));
}

// What the loop below reads around step `i`: the schema check's snapshots, every operand after it (schema and
// taint), and what it observes: every live value after a step that writes, else the result.
StepReads reads_of(const Step& step, int i, const SchemaCheck& schema, const Session& session) {
  StepReads r;
  r.before = schema.snapshot_ids(step);
  r.read = step.inputs;
  const OpSpec& op = spec(step.op);
  if (op.mutates) {
    for (int j = 0; j <= i; ++j)
      if (j == i || session.has_value(j)) r.observe.push_back(j);
    r.grad = true;
  } else {
    r.observe.push_back(i);
  }
  return r;
}

}  // namespace

Trace run(Backend& backend, const Program& program, KeepValues keep) {
  Trace trace;
  trace.backend = backend.name();
  auto session = backend.start();
  const int n = static_cast<int>(program.steps.size());
  Taint taint(program.steps.size());
  GradHistory grads(program.steps.size());
  SchemaCheck schema;
  auto defined = [&](int id) { return taint.values_defined(id); };
  for (int i = 0; i < n; ++i) {
    const Step& step = program.steps[i];
    const OpSpec& op = spec(step.op);
    StepObs obs;
    bool inputs_ok = static_cast<int>(step.inputs.size()) == op.arity;
    for (int in : step.inputs)
      if (in < 0 || in >= i || !session->has_value(in)) inputs_ok = false;
    if (!inputs_ok) {
      obs.status = StepObs::Status::Skipped;
      trace.steps.push_back(std::move(obs));
      continue;
    }
    try {
      session->will_run(step, i, reads_of(step, i, schema, *session));
      schema.before(step, *session, defined);
      taint.before(step, *session);
      session->execute(step, i);
    } catch (const SessionLost&) {
      throw;
    } catch (const StepError& e) {
      obs.status = StepObs::Status::Error;
      obs.category = e.category;
      obs.message = e.what();
      obs.exception = e.exception;
    } catch (const InternalError& e) {
      // A harness adapter reached a branch that cannot happen: a bug in parity, recorded as one.
      obs.status = StepObs::Status::Error;
      obs.category = ErrorCategory::InternalAssert;
      obs.message = e.what();
    } catch (const std::exception& e) {
      obs.status = StepObs::Status::Error;
      obs.category = ErrorCategory::Unclassified;
      obs.message = e.what();
    }
    // A step that writes (in place, backward, flags) may change any value; others only make their result.
    try {
      if (obs.status == StepObs::Status::Ok) taint.update(step, i, *session);
      else if (obs.status == StepObs::Status::Error && (op.is_inplace() || op.runs_backward))
        taint.update_after_raise(step, i, obs.category, *session);
      obs.schema_violations = schema.after(step, i, obs.status == StepObs::Status::Ok, *session, defined);
      if (op.mutates) {
        for (int j = 0; j <= i; ++j)
          if (session->has_value(j))
            observe(*session, taint, grads, keep, i, j, true, obs);
      } else if (obs.status == StepObs::Status::Ok && session->has_value(i)) {
        observe(*session, taint, grads, keep, i, i, false, obs);
      }
    } catch (const SessionLost&) {
      throw;
    } catch (const std::exception& e) {
      // The step made a value the backend cannot even read back (e.g. a negative size): that is its outcome.
      obs.observed.clear();
      obs.status = StepObs::Status::Error;
      obs.category = ErrorCategory::Unclassified;
      obs.exception.reset();
      obs.message = std::string("reading the step's result raised: ") + e.what();
    }
    trace.steps.push_back(std::move(obs));
  }
  return trace;
}

}  // namespace parity::judge
