// Autograd state of a tensor and the rules PyTorch derives from it (torch/csrc/autograd/variable.cpp):
// requires_grad, leaves, grad_fn (regenerated for views whose base changed), gradient edges, view tracking.
#pragma once
#include <cstdint>
#include <optional>

#include "impl/autograd/node.h"
#include "impl/rc.h"
#include "impl/tensor.h"

namespace parity::impl::autograd {

// How a differentiable view was made; anything but Default forbids in-place writes with grad enabled.
enum class CreationMeta : std::uint8_t { Default, NoGradMode, MultiOutputNode };

struct AutogradMeta {
  bool requires_grad = false;  // the leaf flag
  Rc<Node> grad_fn;
  WeakRc<Node> grad_accumulator;
  std::uint32_t output_nr = 0;
  Tensor grad;
  bool retains_grad = false;
  // Where retain_grad()'s hook is: the node (and its output) it was registered on or last moved to. It is not
  // always grad_fn: an in-place write through a view gives the base CopySlices without moving the hook (LibTorch
  // sets the base's gradient edge directly), and the next change of grad_fn moves it from where it still is.
  // Held strongly, as LibTorch's tensor holds its hooks list: the hook must outlive a node nothing else keeps.
  Rc<Node> retain_hook_node;
  std::uint32_t retain_hook_nr = 0;
  // LibTorch 1.13's register_hook makes the tensor's hooks list before it reads grad_fn, which can raise (a view
  // whose base changed); a later retain_grad() finds the list and only marks the tensor (no node gets the hook).
  bool hooks_list_made = false;
  // Differentiable views: the root base (views of views point at it), how the view was made, and the version
  // at which grad_fn was last valid.
  std::optional<Tensor> base;
  CreationMeta creation_meta = CreationMeta::Default;
  std::uint32_t attr_version = 0;
};

AutogradMeta* meta(const Tensor&);
AutogradMeta& materialize(const Tensor&);

bool requires_grad(const Tensor&);
bool is_leaf(const Tensor&);
bool is_view(const Tensor&);
Rc<Node> grad_fn(const Tensor&);
std::uint32_t output_nr(const Tensor&);
Tensor grad(const Tensor&);
// t.mutable_grad() = grad: the C++ API checks nothing here (an undefined grad resets it); a gradient of another
// shape or dtype meets AccumulateGrad's in-place add at the next backward.
void set_grad(const Tensor& t, const Tensor& grad);
bool retains_grad(const Tensor&);

// GradMode enabled and any input requiring grad.
bool compute_requires_grad(std::initializer_list<const Tensor*> inputs);
EdgeList collect_next_edges(std::initializer_list<const Tensor*> inputs);
Edge gradient_edge(const Tensor&);
Rc<Node> grad_accumulator(const Tensor&);

// A new tensor's history: output 0 of fn.
void set_history(const Tensor& t, const Rc<Node>& fn);
// In-place ops: t gets fn as history; a view's base gets CopySlices.
void rebase_history(const Tensor& t, const Rc<Node>& fn);
// Raises PyTorch's errors for in-place writes on leaves and on views that may not be written.
void check_inplace(const Tensor& t, bool any_requires_grad);

// A tensor over t's storage and version counter with this layout that autograd sees as a view of t (its base,
// creation meta): torch::autograd::as_view. The op's gradient node is the caller's (impl/ops/views.cpp).
Tensor as_view(const Tensor& t, const Layout& layout, CreationMeta creation = CreationMeta::Default);
// A tensor sharing storage and version counter that autograd does not see as a view (detach()).
Tensor make_alias(const Tensor& t, const Layout& layout);

// t.set_data(new_data) (VariableHooks::set_data): t keeps its identity, autograd state (grad_fn, .grad, view
// base) and version counter, and takes new_data's storage, layout and dtype. An accumulator made for another
// dtype or device is forgotten (the next one is made afresh); one of the same type is kept, with its old shape.
void set_data(const Tensor& t, const Tensor& new_data);
void set_requires_grad(const Tensor& t, bool value);
void retain_grad(const Tensor& t);
void detach_inplace(const Tensor& t);

}  // namespace parity::impl::autograd
