// Creating a backward node for an op: its row of the derivative table, the edges to its inputs, and its formula.
#pragma once

#include "impl/autograd/functions.h"
#include "impl/autograd/meta.h"
#include "impl/rc.h"

namespace parity::impl::ops {

inline Rc<autograd::Formula> make_node(autograd::Derivative d, std::initializer_list<const Tensor*> inputs,
                                                    autograd::Formula::Fn fn) {
  auto node = make_rc<autograd::Formula>(d, std::move(fn));
  node->set_next_edges(autograd::collect_next_edges(inputs));
  return node;
}

}  // namespace parity::impl::ops
