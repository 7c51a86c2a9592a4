#include "impl/autograd/engine.h"

#include <map>
#include <queue>
#include <unordered_map>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"

namespace parity::impl::autograd {

namespace {

// Makes a gradient fit the input it flows into: reduce a broadcast gradient, cast to the input's dtype.
// `node_name` is the node that produced it, empty for the gradient the caller gave for the root.
Tensor validate(Tensor grad, const InputMetadata& meta, const std::string& node_name, std::size_t index) {
  if (!grad.defined()) return grad;
  if (grad.sizes() != meta.sizes) {
    bool expandable = grad.dim() >= static_cast<std::int64_t>(meta.sizes.size());
    for (std::size_t i = 0; expandable && i < meta.sizes.size(); ++i) {
      std::int64_t g = grad.sizes()[grad.sizes().size() - meta.sizes.size() + i];
      expandable = meta.sizes[i] == g || meta.sizes[i] == 1;
    }
    PARITY_CHECK(expandable, ErrorKind::Shape,
          (node_name.empty() ? std::string() : "Function " + node_name + " returned an ") +
              "invalid gradient at index " + std::to_string(index) + " - got " + format_dims(grad.sizes()) +
              " but expected shape compatible with " + format_dims(meta.sizes));
    grad = sum_to(grad, meta.sizes);
  }
  if (grad.dtype() != meta.dtype) grad = to(grad, meta.dtype);
  return grad;
}

// Sums gradients that reach the same input, in arrival order (torch/csrc/autograd/input_buffer.cpp). LibTorch
// 1.13 adds dense gradients out of place, so the sum's layout is TensorIterator's choice for the pair (later
// versions reuse the first buffer in place when they hold its last reference).
void accumulate(Tensor& slot, Tensor&& g) {
  if (!g.defined()) return;
  slot = slot.defined() ? add(slot, g) : std::move(g);
}

struct ByPriority {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

}  // namespace

void run_backward(const Tensor& root, bool retain_graph, const Tensor& gradient) {
  Tensor grad = gradient;
  if (!grad.defined() && requires_grad(root)) {
    PARITY_CHECK(root.numel() == 1, ErrorKind::NonScalarBackward, "grad can be implicitly created only for scalar outputs");
    grad = ones(root.sizes(), root.dtype());
  }
  Edge root_edge = gradient_edge(root);
  PARITY_CHECK(root_edge.valid(), ErrorKind::NoGradFn, "element 0 of tensors does not require grad and does not have a grad_fn");
  // Engine::execute validates the roots' gradients in the caller's grad mode, before any worker turns it off: a
  // gradient that must be summed down (or cast) to the root's metadata goes through ops that, with grad mode on,
  // read its grad_fn, which raises for a no_grad or multi-output view whose base was written since.
  InputMetadata root_meta{root.sizes(), root.dtype(), root.device()};
  grad = validate(grad, root_meta, "", 0);
  NoGradGuard no_grad;  // backward formulas are not recorded (no create_graph)

  // Dependencies: how many edges point at each node reachable from the root.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{root_edge.fn.get()};
  std::unordered_map<Node*, bool> seen{{root_edge.fn.get(), true}};
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->next_edges()) {
      if (!e.valid()) continue;
      ++deps[e.fn.get()];
      if (!seen[e.fn.get()]) {
        seen[e.fn.get()] = true;
        stack.push_back(e.fn.get());
      }
    }
  }

  std::unordered_map<Node*, TensorList> buffers;
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, ByPriority> ready;
  buffers[root_edge.fn.get()].resize(root_edge.fn->num_inputs());
  // The caller's gradient list keeps the root gradient alive for the whole backward (PyTorch passes it by
  // reference): a leaf root never steals it.
  Tensor root_grad = grad;
  accumulate(buffers[root_edge.fn.get()][root_edge.input_nr], std::move(grad));
  ready.push(root_edge.fn);

  while (!ready.empty()) {
    std::shared_ptr<Node> fn = ready.top();
    ready.pop();
    TensorList inputs = std::move(buffers[fn.get()]);
    buffers.erase(fn.get());
    // retain_grad(): the non-leaf's .grad is a contiguous copy of the gradient reaching its node.
    for (auto& [nr, weak] : fn->retains_grad_hooks()) {
      auto impl = weak.lock();
      if (!impl || nr >= inputs.size() || !inputs[nr].defined()) continue;
      Tensor var(impl);
      auto& m = materialize(var);
      m.grad = m.grad.defined() ? add(m.grad, inputs[nr]) : clone(inputs[nr], MemoryFormat::Contiguous);
    }
    TensorList outputs = fn->apply(std::move(inputs));
    if (!retain_graph) fn->release_variables();
    const auto& edges = fn->next_edges();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Tensor out = i < outputs.size() ? outputs[i] : Tensor();
      if (out.defined() && e.input_nr < e.fn->input_metadata().size())
        out = validate(std::move(out), e.fn->input_metadata()[e.input_nr], fn->name(), i);
      auto& buf = buffers[e.fn.get()];
      if (buf.size() < e.fn->num_inputs()) buf.resize(e.fn->num_inputs());
      accumulate(buf[e.input_nr], std::move(out));
      if (--deps[e.fn.get()] == 0) ready.push(e.fn);
    }
  }
}

}  // namespace parity::impl::autograd
