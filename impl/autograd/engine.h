// The backward engine: runs the graph from a root in PyTorch's order and accumulates into leaves.
#pragma once
#include <vector>

#include "impl/autograd/node.h"
#include "impl/tensor.h"

namespace parity::impl::autograd {

// torch::autograd::backward(roots, gradients, retain_graph, create_graph), behind impl::backward: an undefined
// (or missing) gradient is made implicitly for a one-element root. create_graph: the formulas run with grad mode
// on, so the gradients (and the .grad they accumulate into) have history of their own.
void run_backward(const std::vector<Tensor>& roots, TensorList gradients, bool retain_graph, bool create_graph);

// torch::autograd::grad({output}, {input}, {}, retain_graph, create_graph): the gradient reaching `input` from `output`,
// returned instead of accumulated into any .grad. Only the nodes on a path to the input run (their saved
// tensors are the only ones unpacked, and freed). allow_unused: an undefined result for an input the graph
// does not reach, instead of the error.
// `gradient`: grad_outputs' one gradient for `output`; undefined, an implicit one (one-element outputs only).
Tensor run_grad(const Tensor& output, const Tensor& input, bool retain_graph, bool create_graph, bool allow_unused,
                const Tensor& gradient = Tensor());

}  // namespace parity::impl::autograd
