// Graph nodes: a Node turns the gradients of its outputs into gradients of its inputs, which flow along its
// next edges. Sequence numbers order execution as PyTorch's engine does (later nodes first).
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impl/rc.h"
#include "impl/tensor.h"

namespace parity::impl::autograd {

class Node;

struct Edge {
  Rc<Node> fn;
  std::uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// A node's edges, in the cache of small blocks (impl/block_cache.h): every node of a small op holds some.
using EdgeList = std::vector<Edge, CachedAllocator<Edge>>;

// Shape and type a gradient flowing into a node's input must have (the engine reduces and casts to it).
struct InputMetadata {
  Dims sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device;
};

using TensorList = std::vector<Tensor>;

// Shared from this: a saved output unpacked by its own node gets that node as grad_fn (SavedVariable::unpack).
class Node : public EnableRcFromThis<Node> {
 public:
  Node();
  explicit Node(std::uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // How an error message names the node: name() itself, or (VersionGate::MessagesNameForwardOp) the forward op,
  // as Node::forward_op_name strips a "Backward<N>" suffix: "Backward0" entirely, "Backward1" to "1".
  std::string message_name() const;
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees saved state after a backward that does not retain the graph.
  virtual void release_variables() {}

  std::uint64_t sequence_nr() const { return sequence_nr_; }
  // The longest path from this node to a node with no next edges (PyTorch's topological_nr): a node whose number
  // is below every captured input's cannot lead to one, and autograd.grad's engine does not walk past it.
  std::uint64_t topological_nr() const { return topological_nr_; }
  const EdgeList& next_edges() const { return next_edges_; }
  void set_next_edges(EdgeList e) {
    next_edges_ = std::move(e);
    for (const Edge& edge : next_edges_) update_topological_nr(edge);
  }
  void add_next_edge(Edge e) {
    update_topological_nr(e);
    next_edges_.push_back(std::move(e));
  }
  bool should_compute_output(std::size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }
  // What PyTorch's generated nodes ask while a backward runs: also false when the running graph task does not
  // need the node at that edge (autograd.grad runs only the nodes on a path to its inputs), so an output nobody
  // needs is neither computed nor validated.
  bool task_should_compute_output(std::size_t i) const;
  std::uint32_t add_input_metadata(const Tensor& t);
  const std::vector<InputMetadata, CachedAllocator<InputMetadata>>& input_metadata() const { return input_metadata_; }
  std::size_t num_inputs() const { return input_metadata_.size(); }

  // retain_grad(): the tensor (weakly held) whose .grad receives the gradient of output `nr`.
  std::map<std::uint32_t, WeakRc<TensorImpl>>& retains_grad_hooks() { return retains_grad_; }

 private:
  void update_topological_nr(const Edge& e) {
    if (e.valid()) topological_nr_ = std::max(topological_nr_, e.fn->topological_nr() + 1);
  }
  std::uint64_t sequence_nr_;
  std::uint64_t topological_nr_ = 0;
  EdgeList next_edges_;
  std::vector<InputMetadata, CachedAllocator<InputMetadata>> input_metadata_;
  std::map<std::uint32_t, WeakRc<TensorImpl>> retains_grad_;
};

// The running graph task's exec_info, for a backward that only runs what leads to captured inputs
// (autograd.grad); a backward without one needs every node. The engine installs it on its thread.
class ExecInfo {
 public:
  virtual ~ExecInfo() = default;
  virtual bool should_execute(Node* n) const = 0;
  // add_node_to_current_graph_task_exec_info: CopySlices marks its op's next nodes needed before running it.
  virtual void mark_needed(Node* n) = 0;
};
// The one installed on this thread, or null.
ExecInfo* current_exec_info();

class ExecInfoGuard {
 public:
  explicit ExecInfoGuard(ExecInfo* info);
  ~ExecInfoGuard();
  ExecInfoGuard(const ExecInfoGuard&) = delete;
  ExecInfoGuard& operator=(const ExecInfoGuard&) = delete;

 private:
  ExecInfo* previous_;
};

}  // namespace parity::impl::autograd
