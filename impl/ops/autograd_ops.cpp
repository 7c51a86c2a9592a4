#include "impl/autograd/engine.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/ops.h"

namespace parity::impl {

void backward(const Tensor& root, bool retain_graph, const Tensor& gradient, bool create_graph) {
  autograd::run_backward({root}, {gradient}, retain_graph, create_graph);
}

void backward(const std::vector<Tensor>& roots, bool retain_graph, bool create_graph) {
  autograd::run_backward(roots, {}, retain_graph, create_graph);
}

Tensor autograd_grad(const Tensor& output, const Tensor& input, bool retain_graph, bool allow_unused, bool create_graph) {
  return autograd::run_grad(output, input, retain_graph, create_graph, allow_unused);
}

Tensor autograd_grad(const Tensor& output, const Tensor& input, const Tensor& gradient, bool retain_graph,
                     bool allow_unused, bool create_graph) {
  return autograd::run_grad(output, input, retain_graph, create_graph, allow_unused, gradient);
}

void retain_grad(const Tensor& x) { autograd::retain_grad(x); }

void set_data(const Tensor& x, const Tensor& new_data) { autograd::set_data(x, new_data); }

Tensor requires_grad_(const Tensor& x, bool value) {
  if (!autograd::is_leaf(x) && !value)
    fail(ErrorKind::RequiresGradFlag,
         "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
         "subgraph that doesn't require differentiation use var_no_grad = var.detach().",
         plain_runtime_error_class());
  autograd::set_requires_grad(x, value);
  return x;
}

}  // namespace parity::impl
