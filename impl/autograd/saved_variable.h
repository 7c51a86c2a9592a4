// A tensor saved for backward: remembers the version it was saved at and raises PyTorch's errors when it was
// modified in place since, or freed by an earlier backward.
#pragma once
#include <memory>
#include <string>

#include "impl/autograd/node.h"
#include "impl/tensor.h"

namespace parity::impl::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // is_output: the tensor is an output of the node saving it (its grad_fn is that node; kept weakly).
  SavedVariable(const Tensor& t, bool is_output);
  // The saved data (no autograd state); raises VersionMismatch or GraphFreed.
  Tensor unpack() const;
  void release() { data_ = Tensor(); }
  bool defined() const { return saved_; }

 private:
  Tensor data_;  // shares storage, layout and version counter with the saved tensor
  bool saved_ = false;
  std::uint32_t saved_version_ = 0;
  std::uint32_t output_nr_ = 0;
  std::string grad_fn_name_;  // for the message
  std::string type_string_;
};

extern const char* const kBackwardTwiceMessage;

}  // namespace parity::impl::autograd
