// Backward nodes. Most are a Formula: a row of the derivative table (impl/autograd/derivatives.def: its name and
// what it may save), the tensors it saved (checked for version and freeing when unpacked, before anything else),
// and the derivative as a function of the output gradient.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/autograd/derivatives.h"
#include "impl/autograd/node.h"
#include "impl/autograd/saved_variable.h"
#include "impl/rc.h"

namespace parity::impl::autograd {

class Formula final : public Node {
 public:
  // grads: gradient of each output (one); saved: unpacked saved tensors, in save order.
  using Fn = std::function<TensorList(const Tensor& grad, const TensorList& saved, const Formula& self)>;
  Formula(Derivative d, Fn fn) : derivative_(d), fn_(std::move(fn)) {}
  std::string name() const override { return std::string(derivative(derivative_).name); }
  TensorList apply(TensorList&& grads) override;
  void release_variables() override;
  // Saves t (for the derivative of an input that needs grad) under its name in derivatives.yaml ("self",
  // "other", "result"); is_output for the node's own result. The name must be one the table lists for this node,
  // after the last one saved (an internal assertion otherwise): the table's order is save order. The formula sees
  // saved tensors in save order, which is the order 1.13's generated nodes unpack them in; 2.x's unpack them in
  // the order of their names (VersionGate::SavedUnpackByName), which decides which stale one raises.
  void save(std::string_view name, const Tensor& t, bool is_output = false);
  // For ops whose derivative depends on what the forward computes after the node had to exist.
  void set_formula(Fn fn) { fn_ = std::move(fn); }

 private:
  Derivative derivative_;
  Fn fn_;
  std::vector<SavedVariable> saved_;
  std::vector<std::string_view> saved_names_;  // the table's strings
  std::size_t next_save_ = 0;                 // table positions before this one are behind us
};

// A node with several outputs (multi-output views): the derivative sees the gradient of every output, undefined
// where none flowed, and runs only when at least one is defined (any_grad_defined in PyTorch's generated nodes).
class MultiOutputFormula final : public Node {
 public:
  using Fn = std::function<TensorList(const TensorList& grads)>;
  MultiOutputFormula(Derivative d, Fn fn) : derivative_(d), fn_(std::move(fn)) {}
  std::string name() const override { return std::string(derivative(derivative_).name); }
  TensorList apply(TensorList&& grads) override;

 private:
  Derivative derivative_;
  Fn fn_;
};

// The dummy root of a backward with several roots (torch::autograd::GraphRoot): it hands each root's gradient
// to that root's edge, so the engine counts dependencies and accumulates as for any other node.
class GraphRoot final : public Node {
 public:
  GraphRoot(EdgeList roots, TensorList grads) : grads_(std::move(grads)) { set_next_edges(std::move(roots)); }
  std::string name() const override { return "GraphRoot"; }
  TensorList apply(TensorList&&) override { return grads_; }

 private:
  TensorList grads_;
};

// Accumulates a leaf's gradient into .grad, following PyTorch's gradient layout contract.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  std::string name() const override { return std::string(derivative(Derivative::AccumulateGrad).name); }
  TensorList apply(TensorList&& grads) override;

 private:
  WeakRc<TensorImpl> leaf_;
};

// In-place op on a view: the base's gradient goes through the op's node applied to the view's slice.
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Layout& view, Rc<Node> fn);
  std::string name() const override { return std::string(derivative(Derivative::CopySlices).name); }
  TensorList apply(TensorList&& grads) override;
  void release_variables() override { fn_.reset(); }

 private:
  Layout base_;
  Layout view_;
  Rc<Node> fn_;
};

// Gradient of as_strided(input_geometry -> sizes/strides/offset) (at::native as_strided_backward).
Tensor as_strided_backward(const Tensor& grad, const Layout& input_geometry, const Dims& sizes, const Dims& strides,
                           std::int64_t offset);

// The view's history regenerated after its base changed: AsStridedBackward0 from the base.
Rc<Node> make_as_strided_backward(const Tensor& base, const Layout& view);

}  // namespace parity::impl::autograd
