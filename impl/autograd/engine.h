// The backward engine: runs the graph from a root in PyTorch's order and accumulates into leaves.
#pragma once
#include "impl/tensor.h"

namespace parity::impl::autograd {

// The engine run behind impl::backward (tensor.backward()): the same arguments in the same order, without
// defaults. gradient may be undefined for a one-element root.
void run_backward(const Tensor& root, bool retain_graph, const Tensor& gradient);

}  // namespace parity::impl::autograd
