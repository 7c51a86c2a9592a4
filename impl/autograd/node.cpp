#include "impl/autograd/node.h"

#include <atomic>

namespace parity::impl::autograd {

namespace {
// PyTorch numbers nodes per thread in creation order; the engine runs the highest number first.
thread_local std::uint64_t g_next_sequence_nr = 0;
}  // namespace

Node::Node() : sequence_nr_(g_next_sequence_nr++) {}

std::uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back(InputMetadata{t.sizes(), t.dtype(), t.device()});
  return static_cast<std::uint32_t>(input_metadata_.size() - 1);
}

}  // namespace parity::impl::autograd
