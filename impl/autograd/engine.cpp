#include "impl/autograd/engine.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>

#include "impl/autograd/functions.h"
#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/ops.h"
#include "impl/version_gate.h"

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
  // validate_outputs moves a zero-dim gradient to its input's device and refuses any other on another device.
  if (grad.device() != meta.device) {
    PARITY_CHECK(grad.dim() == 0, ErrorKind::Device,
                 (node_name.empty() ? std::string() : "Function " + node_name + " returned an ") +
                     "invalid gradient at index " + std::to_string(index) + " - expected device " +
                     meta.device.str() + " but got " + grad.device().str());
    grad = to(grad, meta.device);
  }
  return grad;
}

// Sums gradients that reach the same input, in arrival order (torch/csrc/autograd/input_buffer.cpp). LibTorch
// 1.13 adds dense gradients out of place, so the sum's layout is TensorIterator's choice for the pair. 2.x
// (VersionGate::InputBufferAccumulatesInPlace) adds into the first in place, which bumps its version, when grad
// mode is off and the buffer holds the last reference to it and to its storage, and it is non-overlapping and
// dense (can_accumulate_inplace).
void accumulate(Tensor& slot, Tensor&& g) {
  if (!g.defined()) return;
  if (!slot.defined()) {
    slot = std::move(g);
    return;
  }
  if (follows(VersionGate::InputBufferAccumulatesInPlace) && !grad_mode_enabled() &&
      slot.is_non_overlapping_and_dense() && slot.use_count() == 1 && slot.storage().use_count() == 1) {
    add_(slot, g);
    return;
  }
  slot = add(slot, g);
}

struct ByPriority {
  bool operator()(const Rc<Node>& a, const Rc<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

// The placeholder torch captures for an input the graph cannot reach (NOTE [ Autograd Unreachable Input ]).
class Unreachable final : public Node {
 public:
  std::string name() const override { return "torch::autograd::Identity"; }
  TensorList apply(TensorList&& grads) override { return std::move(grads); }
};

// The gradient arriving at one input of a node (torch's exec_info capture).
struct Capture {
  Edge edge;
  Tensor grad;
};

// _make_grads then run_backward's root checks (torch/csrc/autograd/autograd.cpp), in that order: every implicit
// gradient is made (a root requiring grad must have one element) before any root's edge is looked up.
EdgeList root_edges(const std::vector<Tensor>& roots, TensorList& grads) {
  grads.resize(roots.size());
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (grads[i].defined() || !requires_grad(roots[i])) continue;
    PARITY_CHECK(roots[i].numel() == 1, ErrorKind::NonScalarBackward, "grad can be implicitly created only for scalar outputs");
    grads[i] = ones(roots[i].sizes(), roots[i].dtype(), false, roots[i].device());
  }
  EdgeList edges;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    edges.push_back(gradient_edge(roots[i]));
    PARITY_CHECK(edges.back().valid(), ErrorKind::NoGradFn,
                 "element " + std::to_string(i) + " of tensors does not require grad and does not have a grad_fn");
  }
  return edges;
}

// Per node reachable from the root, in one map (one allocation per node, not one per field): how many edges
// point at it (GraphTask's dependencies), whether the walk saw it, and the gradients gathered for its inputs.
// `counted`: the walk counted edges into the node and they have not all delivered (GraphTask's dependencies holds
// an entry).
struct NodeTask {
  int deps = 0;
  bool counted = false;
  bool seen = false;
  TensorList buffer;
};

// compute_dependencies: autograd.grad's walk does not go past a node whose topological number is below every
// captured input's (min_topo_nr): nothing there leads to one.
std::unordered_map<Node*, NodeTask> count_dependencies(Node* root, const std::vector<Capture>& captures) {
  std::uint64_t min_topo_nr = 0;
  if (!captures.empty()) {
    min_topo_nr = UINT64_MAX;
    for (const auto& c : captures) min_topo_nr = std::min(min_topo_nr, c.edge.fn->topological_nr());
  }
  std::unordered_map<Node*, NodeTask> tasks;
  tasks.reserve(32);
  std::vector<Node*> stack{root};
  tasks[root].seen = true;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (n->topological_nr() < min_topo_nr) continue;
    for (const auto& e : n->next_edges()) {
      if (!e.valid()) continue;
      NodeTask& t = tasks[e.fn.get()];
      ++t.deps;
      t.counted = true;
      if (!t.seen) {
        t.seen = true;
        stack.push_back(e.fn.get());
      }
    }
  }
  return tasks;
}

// The engine behind backward and grad. With no captures every node reachable from the roots runs and leaves
// accumulate; with captures, a node runs only when a path leads from it to a captured edge (exec_info's
// `needed`), and a captured edge's node only hands over what reaches it. `root_grads` are the roots' gradients,
// one per root, as root_edges made them; their validated forms stay referenced in `grads` for the whole backward
// (PyTorch validates the caller's list in place and holds it by reference), so a leaf root never steals one.
void execute(const EdgeList& roots, const TensorList& root_grads, bool retain_graph, bool create_graph,
             std::vector<Capture>& captures) {
  // Engine::execute validates the roots' gradients in the caller's grad mode, before any worker turns it off: a
  // gradient that must be summed down (or cast) to the root's metadata goes through ops that, with grad mode on,
  // read its grad_fn, which raises for a no_grad or multi-output view whose base was written since.
  TensorList grads = root_grads;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    PARITY_INTERNAL_ASSERT(roots[i].input_nr < roots[i].fn->input_metadata().size(), "a root's node has no metadata for it");
    grads[i] = validate(grads[i], roots[i].fn->input_metadata()[roots[i].input_nr], "", i);
  }
  // The graph task's grad mode is create_graph: with it, every formula, sum and cast below records history.
  GradModeGuard grad_mode(create_graph);
  // One root is the graph's root itself; several hang from a GraphRoot that hands out their gradients.
  const Edge root_edge = roots.size() == 1 ? roots.front() : Edge{make_rc<GraphRoot>(roots, grads), 0};

  std::unordered_map<Node*, NodeTask> tasks = count_dependencies(root_edge.fn.get(), captures);

  // needed(n): a path leads from n to a captured node. Every node is needed when nothing is captured.
  std::unordered_map<Node*, bool> needed;
  auto captured_at = [&](Node* n) {
    for (const auto& c : captures)
      if (c.edge.fn.get() == n) return true;
    return false;
  };
  std::function<bool(Node*)> compute_needed = [&](Node* n) -> bool {
    if (auto it = needed.find(n); it != needed.end()) return it->second;
    needed[n] = false;  // no cycles in a graph; a placeholder while the children are visited
    bool any = false;
    for (const auto& e : n->next_edges())
      if (e.valid()) any = (captured_at(e.fn.get()) || compute_needed(e.fn.get())) || any;
    return needed[n] = any;
  };
  const bool capturing = !captures.empty();
  // CopySlices marks its op's next nodes needed before it runs the op (LibTorch 1.13's workaround for exec_info
  // not looking inside CopySlices), so the op computes the gradients of the tensors it read and delivers them
  // even when no captured edge lies beyond: an AccumulateGrad there accumulates (autograd.grad writes that leaf's
  // .grad), another node runs, computing nothing its own children are not needed for. See
  // tests/impl/autograd_test.cpp (AutogradGrad*).
  struct TaskExecInfo final : ExecInfo {
    std::function<bool(Node*)> needed;
    std::unordered_map<Node*, bool> marked;
    bool should_execute(Node* n) const override {
      auto it = marked.find(n);
      return (it != marked.end() && it->second) || needed(n);
    }
    void mark_needed(Node* n) override { marked[n] = true; }
  } exec_info;
  exec_info.needed = [&](Node* n) { return captured_at(n) || compute_needed(n); };
  ExecInfoGuard installed(capturing ? &exec_info : nullptr);
  auto should_run = [&](Node* n) { return !capturing || compute_needed(n) || exec_info.marked[n]; };
  auto should_visit = [&](Node* n) { return !capturing || exec_info.should_execute(n); };

  std::priority_queue<Rc<Node>, std::vector<Rc<Node>>, ByPriority> ready;
  TensorList& root_buffer = tasks[root_edge.fn.get()].buffer;
  root_buffer.resize(std::max<std::size_t>(root_edge.fn->num_inputs(), 1));
  // A copy: the validated gradients stay referenced by `grads` (PyTorch validates the caller's list in place).
  if (roots.size() == 1) accumulate(root_buffer[root_edge.input_nr], Tensor(grads.front()));
  ready.push(root_edge.fn);

  while (!ready.empty()) {
    Rc<Node> fn = ready.top();
    ready.pop();
    TensorList inputs = std::move(tasks[fn.get()].buffer);
    tasks[fn.get()].buffer = TensorList();
    for (auto& c : captures)
      if (c.edge.fn == fn && c.edge.input_nr < inputs.size()) c.grad = inputs[c.edge.input_nr];
    // retain_grad(): the non-leaf's .grad is a contiguous copy of the gradient reaching its node.
    auto run_retains_grad_hooks = [&] {
      for (auto& [nr, weak] : fn->retains_grad_hooks()) {
        auto impl = weak.lock();
        if (!impl || nr >= inputs.size() || !inputs[nr].defined()) continue;
        Tensor var(impl);
        auto& m = materialize(var);
        m.grad = m.grad.defined() ? add(m.grad, inputs[nr]) : clone(inputs[nr], MemoryFormat::Contiguous);
      }
    };
    // A captured node nobody needs only hands its gradient over: in 1.13 evaluate_function returns before any
    // hook, 2.x first runs its tensor pre-hooks, retain_grad's among them (VersionGate::CapturedNodesRunRetainGrad).
    if (!should_run(fn.get())) {
      if (follows(VersionGate::CapturedNodesRunRetainGrad)) run_retains_grad_hooks();
      continue;
    }
    run_retains_grad_hooks();
    TensorList outputs = fn->apply(std::move(inputs));
    // The inputs die with the call, as call_function's temporary list does: an output that is an input passed
    // through (AddBackward0's) is then referenced by the outputs alone, which accumulate() counts.
    inputs.clear();
    const auto& edges = fn->next_edges();
    // call_function validates every output before the engine frees the node's saved tensors: a node whose
    // gradient is refused keeps them, and a second backward raises the same error, not graph_freed.
    outputs.resize(std::max(outputs.size(), edges.size()));
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (e.valid() && outputs[i].defined() && e.input_nr < e.fn->input_metadata().size())
        outputs[i] = validate(std::move(outputs[i]), e.fn->input_metadata()[e.input_nr], fn->name(), i);
    }
    if (!retain_graph) fn->release_variables();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Tensor out = std::move(outputs[i]);
      NodeTask& t = tasks[e.fn.get()];
      // An edge the walk did not count: one from a node past min_topo_nr that CopySlices marked needed (1.13
      // marks them all), into a node whose counted edges have all delivered, or that was never counted.
      if (!t.counted) fail(ErrorKind::Argument, "dependency not found for " + e.fn->name(), plain_runtime_error_class());
      const bool ready_now = --t.deps == 0;
      if (ready_now) t.counted = false;
      if (!should_visit(e.fn.get())) continue;
      auto& buf = t.buffer;
      if (buf.size() < e.fn->num_inputs()) buf.resize(e.fn->num_inputs());
      accumulate(buf[e.input_nr], std::move(out));
      if (ready_now) ready.push(e.fn);
    }
  }
}

}  // namespace

void run_backward(const std::vector<Tensor>& roots, TensorList gradients, bool retain_graph, bool create_graph) {
  const EdgeList edges = root_edges(roots, gradients);
  std::vector<Capture> none;
  execute(edges, gradients, retain_graph, create_graph, none);
}

Tensor run_grad(const Tensor& output, const Tensor& input, bool retain_graph, bool create_graph, bool allow_unused,
                const Tensor& gradient) {
  // run_backward's checks of the output, then of the input; the output's edge is made first (a leaf output gets
  // its accumulator), so a leaf input no op used (and that is not the output) has none and is unreachable.
  TensorList gradients{gradient};
  const EdgeList roots = root_edges({output}, gradients);
  // The C++ torch::autograd::grad names the input by its index (always 0: parity differentiates one input).
  const bool by_index = follows(VersionGate::AutogradGradNamesInputIndex);
  PARITY_CHECK(requires_grad(input), ErrorKind::NoGradFn,
               by_index ? "element 0 of the input tensors does not require grad"
                        : "One of the differentiated Tensors does not require grad");
  Edge edge;
  if (auto fn = grad_fn(input)) edge = Edge{fn, output_nr(input)};
  else if (auto* m = meta(input)) edge = Edge{m->grad_accumulator.lock(), 0};
  // An input with no accumulator is unreachable: torch captures an Identity placeholder no path leads to, so
  // nothing runs, but the engine still validates the roots' gradients (a grad_outputs of another shape raises).
  if (!edge.valid()) edge = Edge{make_rc<Unreachable>(), 0};
  std::vector<Capture> captures{{edge, Tensor()}};
  execute(roots, gradients, retain_graph, create_graph, captures);
  // 2.x's text lacks a space after the index, as LibTorch's does.
  PARITY_CHECK(allow_unused || captures.front().grad.defined(), ErrorKind::Argument,
               std::string(by_index ? "element 0of" : "One of") +
                   " the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if "
                   "this is the desired behavior.");
  return captures.front().grad;
}

}  // namespace parity::impl::autograd
