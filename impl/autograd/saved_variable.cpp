#include "impl/autograd/saved_variable.h"

#include "impl/autograd/meta.h"
#include "impl/error.h"

namespace parity::impl::autograd {

const char* const kBackwardTwiceMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  saved_ = true;
  // Only the data is kept: holding the tensor itself would tie an output to its own grad_fn.
  data_ = Tensor::over(t.storage(), t.layout(), t.dtype(), t.version_counter());
  saved_version_ = t.version();
  output_nr_ = autograd::output_nr(t);
  type_string_ = t.type_string();
  if (auto fn = is_output ? nullptr : autograd::grad_fn(t)) grad_fn_name_ = fn->name();
}

Tensor SavedVariable::unpack() const {
  if (!saved_) return Tensor();
  PARITY_CHECK(data_.defined(), ErrorKind::GraphFreed, kBackwardTwiceMessage);
  std::uint32_t current = data_.version();
  if (current != saved_version_) {
    std::string msg = "one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [" + type_string_ + "]";
    if (!grad_fn_name_.empty())
      msg += ", which is output " + std::to_string(output_nr_) + " of " + grad_fn_name_ + ",";
    msg += " is at version " + std::to_string(current) + "; expected version " + std::to_string(saved_version_) +
           " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
           "with torch.autograd.set_detect_anomaly(True).";
    fail(ErrorKind::VersionMismatch, msg);
  }
  return data_;
}

}  // namespace parity::impl::autograd
