// The backward engine: runs the graph from a root in PyTorch's order and accumulates into leaves.
#pragma once
#include "impl/tensor.h"

namespace parity::impl::autograd {

// tensor.backward(gradient, retain_graph): gradient may be undefined for a one-element root.
void backward(const Tensor& root, const Tensor& gradient, bool retain_graph);

}  // namespace parity::impl::autograd
