// The backward engine: runs the graph from a root in PyTorch's order and accumulates into leaves.
#pragma once
#include "impl/tensor.h"

namespace parity::impl::autograd {

// The engine run behind impl::backward (tensor.backward()): the same arguments in the same order, without
// defaults. gradient may be undefined for a one-element root.
void run_backward(const Tensor& root, bool retain_graph, const Tensor& gradient);

// torch::autograd::grad({output}, {input}, {}, retain_graph): the gradient reaching `input` from `output`,
// returned instead of accumulated into any .grad. Only the nodes on a path to the input run (their saved
// tensors are the only ones unpacked, and freed). allow_unused: an undefined result for an input the graph
// does not reach, instead of the error.
Tensor run_grad(const Tensor& output, const Tensor& input, bool retain_graph, bool allow_unused);

}  // namespace parity::impl::autograd
