#include "impl/autograd/meta.h"

#include "impl/autograd/functions.h"
#include "impl/autograd/grad_mode.h"
#include "impl/error.h"
#include "impl/version_gate.h"

namespace parity::impl::autograd {

namespace {
// update_cpp_hooks_on_new_gradfn: t's grad_fn became `fn`; its retain_grad hook moves there from wherever it is.
void move_retains_grad_hook(const Tensor& t, const Rc<Node>& fn) {
  auto* m = t.impl()->autograd.get();
  if (!fn || !m || !m->retains_grad) return;
  const Rc<Node> holder = m->retain_hook_node;
  if (!holder) return;
  auto& hooks = holder->retains_grad_hooks();
  auto it = hooks.find(m->retain_hook_nr);
  if (it == hooks.end()) return;
  fn->retains_grad_hooks()[0] = it->second;
  hooks.erase(it);
  m->retain_hook_node = fn;
  m->retain_hook_nr = 0;
}
// handle_view_on_rebase: a view that is not Default may not be written in place with grad mode on, directly
// (`indirect` false) or through its base or another view of it (raised when its grad_fn is next read). The
// message names the view's own node when it has one. A no_grad view that has one (a view of a no_grad view, made
// with grad mode on) fails LibTorch 1.13's INTERNAL ASSERT there (a ledger entry); impl raises what 1.13 means
// to, and from VersionGate::ViewOfNoGradViewMessage on the text LibTorch has for it.
[[noreturn]] void view_rebase_error(const AutogradMeta& m, bool indirect) {
  std::string modified = indirect ? "its base or another view of its base has been" : "is being";
  const std::string output =
      m.grad_fn ? "Output " + std::to_string(m.output_nr) + " of " + m.grad_fn->message_name() : "";
  std::string msg;
  if (!m.grad_fn)
    msg = "A view was created in no_grad mode and " + modified + " modified inplace with grad mode enabled.";
  else if (m.creation_meta == CreationMeta::NoGradMode && follows(VersionGate::ViewOfNoGradViewMessage))
    msg = output + " is a view of a view which was created in no_grad mode and " + modified +
          " modified inplace with grad mode enabled.";
  else
    msg = output + " is a view and " + modified + " modified inplace.";
  if (m.creation_meta == CreationMeta::MultiOutputNode)
    msg += " This view is the output of a function that returns multiple views. Such functions do not allow the "
           "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";
  else
    msg += " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
           "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
           "inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  fail(ErrorKind::ViewInPlace, msg);
}
}  // namespace

AutogradMeta* meta(const Tensor& t) { return t.defined() ? t.impl()->autograd.get() : nullptr; }

AutogradMeta& materialize(const Tensor& t) {
  if (!t.impl()->autograd) t.impl()->autograd = std::make_unique<AutogradMeta>();
  return *t.impl()->autograd;
}

bool is_view(const Tensor& t) {
  auto* m = meta(t);
  return m && m->base.has_value();
}

bool requires_grad(const Tensor& t) {
  auto* m = meta(t);
  if (!m) return false;
  return m->requires_grad || m->grad_fn || (m->base && requires_grad(*m->base));
}

Rc<Node> grad_fn(const Tensor& t) {
  auto* m = meta(t);
  if (!m) return nullptr;
  if (m->base) {
    if (!m->grad_fn && !requires_grad(*m->base)) return m->grad_fn;
    std::uint32_t current = t.version();
    if (m->attr_version != current) {
      // The base or another view was modified in place: the view's history now starts at the base.
      if (m->creation_meta != CreationMeta::Default) view_rebase_error(*m, /*indirect=*/true);
      m->grad_fn = make_as_strided_backward(*m->base, t.layout());
      move_retains_grad_hook(t, m->grad_fn);
      m->output_nr = 0;
      m->attr_version = current;
    }
    return m->grad_fn;
  }
  return m->grad_fn;
}

bool is_leaf(const Tensor& t) {
  auto* m = meta(t);
  return !m || !m->grad_fn;
}

std::uint32_t output_nr(const Tensor& t) {
  auto* m = meta(t);
  return m ? m->output_nr : 0;
}

Tensor grad(const Tensor& t) {
  auto* m = meta(t);
  return m ? m->grad : Tensor();
}

void set_grad(const Tensor& t, const Tensor& grad) { materialize(t).grad = grad; }

// The flag as retain_grad() set it: detach_() leaves it (LibTorch's resets grad_fn, requires_grad and output_nr
// only), so a detached tensor that retained its grad is a leaf that still says retains_grad.
bool retains_grad(const Tensor& t) {
  auto* m = meta(t);
  return m && m->retains_grad;
}

bool compute_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!grad_mode_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}

Rc<Node> grad_accumulator(const Tensor& t) {
  auto* m = meta(t);
  if (!m || !m->requires_grad) return nullptr;
  if (auto acc = m->grad_accumulator.lock()) return acc;
  auto acc = make_rc<AccumulateGrad>(t);
  m->grad_accumulator = acc;
  return acc;
}

void set_data(const Tensor& t, const Tensor& new_data) {
  PARITY_CHECK(!requires_grad(t) || is_floating(new_data.dtype()), ErrorKind::DType,
               "data set to a tensor that requires gradients must be floating point or complex dtype");
  if (auto* m = meta(t))
    if (auto acc = m->grad_accumulator.lock())
      if (new_data.dtype() != t.dtype() || !(acc->input_metadata().at(0).device == new_data.device()))
        m->grad_accumulator.reset();
  TensorImpl& impl = *t.impl();
  impl.storage = new_data.storage();
  impl.layout = new_data.layout();
  t.copy_stride_slots(new_data);
  impl.dtype = new_data.dtype();
}

Edge gradient_edge(const Tensor& t) {
  if (auto fn = grad_fn(t)) return Edge{fn, output_nr(t)};
  return Edge{grad_accumulator(t), 0};
}

EdgeList collect_next_edges(std::initializer_list<const Tensor*> inputs) {
  EdgeList edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(t && t->defined() ? gradient_edge(*t) : Edge{});
  return edges;
}

void set_history(const Tensor& t, const Rc<Node>& fn) {
  // LibTorch's set_history refuses a result of a dtype autograd does not differentiate, which only an op that
  // skipped its own dtype checks can give it (a bool product of an empty matmul): 1.13 fails an INTERNAL ASSERT
  // there (a ledger entry), 2.x raises (VersionGate::HistoryRefusesIntegralResults).
  if (follows(VersionGate::HistoryRefusesIntegralResults))
    PARITY_CHECK(is_floating(t.dtype()), ErrorKind::DType,
                 "Autograd not support dtype: " + std::string(type_name(t.dtype())));
  auto& m = materialize(t);
  m.output_nr = fn->add_input_metadata(t);
  m.grad_fn = fn;
}


void rebase_history(const Tensor& t, const Rc<Node>& fn) {
  fn->add_input_metadata(t);
  auto& m = materialize(t);
  if (m.base) {
    // In-place on a view: the base takes the op (through CopySlices); the view regenerates its grad_fn.
    const Tensor& base = *m.base;
    auto copy_slices = make_rc<CopySlices>(base, t.layout(), fn);
    // LibTorch 1.13 leaves the base's own retain_grad hook where it is (set_gradient_edge, no hook update); 2.x
    // moves it to CopySlices, but only when the view required grad before the write: a base detached in place
    // after retain_grad() keeps its hook on the node it left, and gets no .grad.
    const bool moves_hook = follows(VersionGate::BaseRetainGradHookMovesToCopySlices) && requires_grad(t);
    auto& bm = materialize(base);
    bm.grad_fn = copy_slices;
    bm.output_nr = 0;
    if (moves_hook) move_retains_grad_hook(base, copy_slices);
    grad_fn(t);
    return;
  }
  m.grad_fn = fn;
  m.output_nr = 0;
  move_retains_grad_hook(t, fn);
}

void check_inplace(const Tensor& t, bool any_requires_grad) {
  if (!any_requires_grad || !grad_mode_enabled()) return;
  auto* m = meta(t);
  if (m && m->base) {
    if (m->creation_meta != CreationMeta::Default) view_rebase_error(*m, /*indirect=*/false);
    PARITY_CHECK(!(requires_grad(t) && is_leaf(*m->base)), ErrorKind::LeafInPlace,
          "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
  PARITY_CHECK(!(requires_grad(t) && is_leaf(t)), ErrorKind::LeafInPlace,
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

Tensor as_view(const Tensor& t, const Layout& layout, CreationMeta creation) {
  Tensor v = Tensor::over(t.storage(), layout, t.dtype(), t.version_counter());
  auto& m = materialize(v);
  auto* tm = meta(t);
  m.base = (tm && tm->base) ? *tm->base : t;
  // propagate_creation_meta: a Default view of a view keeps its parent's kind; any other kind replaces it
  // (a no_grad view of a multi-output view is a no_grad view, and the reverse).
  m.creation_meta = (creation == CreationMeta::Default && tm && tm->base) ? tm->creation_meta : creation;
  m.attr_version = v.version();
  return v;
}

Tensor make_alias(const Tensor& t, const Layout& layout) {
  if (&layout == &t.layout()) return t.alias();
  return Tensor::over(t.storage(), layout, t.dtype(), t.version_counter());
}

void set_requires_grad(const Tensor& t, bool value) {
  PARITY_CHECK(!value || is_floating(t.dtype()), ErrorKind::DType,
        "Only Tensors of floating point and complex dtype can require gradients");
  if (!value && !meta(t)) return;
  materialize(t).requires_grad = value;
}

void retain_grad(const Tensor& t) {
  PARITY_CHECK(requires_grad(t), ErrorKind::RetainGrad, "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf(t)) return;
  auto& m = materialize(t);
  if (m.retains_grad) return;
  // 1.13 makes the tensor's hook list before it reads grad_fn: when that read raises, a second retain_grad finds
  // the list and only sets the flag. 2.x reads grad_fn again, and raises again
  // (VersionGate::RetainGradReadsGradFnEachTime).
  if (m.hooks_list_made && !follows(VersionGate::RetainGradReadsGradFnEachTime)) {
    m.retains_grad = true;
    return;
  }
  m.hooks_list_made = true;
  auto fn = grad_fn(t);
  fn->retains_grad_hooks()[m.output_nr] = t.shared();
  m.retain_hook_node = fn;
  m.retain_hook_nr = m.output_nr;
  m.retains_grad = true;
}

void detach_inplace(const Tensor& t) {
  PARITY_CHECK(!is_view(t), ErrorKind::DetachView,
        "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
        "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
        "detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
        "function in torch/optim/optimizer.py as the solution.");
  auto& m = materialize(t);
  m.requires_grad = false;
  m.grad_fn.reset();
  m.output_nr = 0;
}

}  // namespace parity::impl::autograd
