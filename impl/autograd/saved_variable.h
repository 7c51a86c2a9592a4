// A tensor saved for backward: remembers the version it was saved at and raises PyTorch's errors when it was
// modified in place since, or freed by an earlier backward.
#pragma once
#include <string>

#include "impl/autograd/node.h"
#include "impl/rc.h"
#include "impl/tensor.h"

namespace parity::impl::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // is_output: the tensor is an output of the node saving it (its grad_fn is that node).
  SavedVariable(const Tensor& t, bool is_output);
  // The saved tensor: an input or leaf itself; an output as a new tensor over its data whose grad_fn is the node
  // that made it. Raises VersionMismatch or GraphFreed. `saved_for` is the node unpacking it, which the
  // version-mismatch message names when PyTorch has no other node to name, and an output's grad_fn.
  Tensor unpack(const Node& saved_for) const;
  void release() { data_ = Tensor(); }
  bool defined() const { return saved_; }

 private:
  Tensor data_;  // the original tensor, or (an output) a tensor sharing its storage, layout and version counter
  // data_ is the tensor itself, for an input or a leaf (PyTorch's saved_original_: no reference cycle is
  // possible); its grad_fn is read when unpacking, so the message names the node it has then, as PyTorch's does.
  bool saved_original_ = false;
  bool saved_ = false;
  bool is_leaf_ = false;
  bool is_inplace_on_view_ = false;  // an in-place op's result that is a view: its grad_fn is kept weakly
  WeakRc<Node> weak_grad_fn_;
  std::uint32_t saved_version_ = 0;
  std::uint32_t output_nr_ = 0;  // an output's; PyTorch never records it for an original, which reads as 0
};

extern const char* const kBackwardTwiceMessage;

}  // namespace parity::impl::autograd
