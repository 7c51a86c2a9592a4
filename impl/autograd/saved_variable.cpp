#include "impl/autograd/saved_variable.h"

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/version_gate.h"

namespace parity::impl::autograd {

const char* const kBackwardTwiceMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

// torch/csrc/autograd/saved_variable.cpp, without hooks.
SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  saved_ = true;
  saved_version_ = t.version();
  is_leaf_ = autograd::is_leaf(t);
  if (!is_output || is_leaf_) {
    // The tensor itself: what it holds when unpacked (after a set_data, its new data) is what the derivative
    // reads, and what the version-mismatch message prints.
    data_ = t;
    saved_original_ = true;
    return;
  }
  // An output: holding the tensor would tie it to its own grad_fn, so only its data and output number are kept.
  data_ = Tensor::over(t.storage(), t.layout(), t.dtype(), t.version_counter());
  output_nr_ = autograd::output_nr(t);
  is_inplace_on_view_ = autograd::is_view(t);
  if (is_inplace_on_view_) weak_grad_fn_ = autograd::grad_fn(t);
}

Tensor SavedVariable::unpack(const Node& saved_for) const {
  if (!saved_) return Tensor();
  PARITY_CHECK(data_.defined(), ErrorKind::GraphFreed, kBackwardTwiceMessage);
  // The node the message names: an original's grad_fn now (reading it regenerates a view's, as in PyTorch), an
  // in-place-on-view result's grad_fn from when it was saved if it still exists, else the unpacking node.
  Rc<Node> fn = is_inplace_on_view_    ? weak_grad_fn_.lock()
                             : saved_original_ ? autograd::grad_fn(data_)
                                                   : nullptr;
  // A saved input that was a non-leaf has lost its grad_fn: detach_() cleared it. PyTorch unpacks inputs with no
  // saved_for node to fall back on; 2.x raises this, 1.13 fails an internal assert there ("No grad_fn for non-leaf
  // saved tensor", a known divergence).
  PARITY_CHECK(!(saved_original_ && !is_leaf_ && !fn && !is_inplace_on_view_), ErrorKind::Argument,
               "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
               "supported, please use out-of-place `.detach()` instead");
  const Node* named = fn ? fn.get() : is_leaf_ ? nullptr : &saved_for;
  std::uint32_t current = data_.version();
  if (current != saved_version_) {
    std::string msg = "one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [" + data_.type_string() + "]";
    if (named) msg += ", which is output " + std::to_string(output_nr_) + " of " + named->message_name() + ",";
    msg += " is at version " + std::to_string(current) + "; expected version " + std::to_string(saved_version_) +
           " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
           "with torch.autograd.set_detect_anomaly(True" +
           std::string(follows(VersionGate::AnomalyHintNamesCheckNan) ? ", check_nan=False" : "") + ").";
    fail(ErrorKind::VersionMismatch, msg);
  }
  // An output comes back as a new tensor whose history is the node that made it (the unpacking node, or an
  // in-place-on-view result's grad_fn when it still exists): under create_graph a formula using it records an
  // edge back into the first graph, as PyTorch's make_variable(data, Edge(grad_fn, output_nr)) does. Without
  // grad mode no formula reads that history, so the data itself serves, and every backward saves the copy.
  if (saved_original_ || !grad_mode_enabled()) return data_;
  Tensor var = Tensor::over(data_.storage(), data_.layout(), data_.dtype(), data_.version_counter());
  auto& m = materialize(var);
  m.grad_fn = fn ? fn : std::const_pointer_cast<Node>(saved_for.shared_from_this());
  m.output_nr = output_nr_;
  return var;
}

}  // namespace parity::impl::autograd
