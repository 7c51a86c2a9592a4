#include "impl/autograd/node.h"

#include <algorithm>
#include <atomic>
#include <cctype>

#include "impl/version_gate.h"

namespace parity::impl::autograd {

namespace {
// PyTorch numbers nodes per thread in creation order; the engine runs the highest number first.
thread_local std::uint64_t g_next_sequence_nr = 0;
thread_local ExecInfo* g_exec_info = nullptr;
}  // namespace

ExecInfo* current_exec_info() { return g_exec_info; }
ExecInfoGuard::ExecInfoGuard(ExecInfo* info) : previous_(g_exec_info) { g_exec_info = info; }
ExecInfoGuard::~ExecInfoGuard() { g_exec_info = previous_; }

bool Node::task_should_compute_output(std::size_t i) const {
  if (!should_compute_output(i)) return false;
  return g_exec_info == nullptr || g_exec_info->should_execute(next_edges_[i].fn.get());
}

Node::Node() : sequence_nr_(g_next_sequence_nr++) {}

std::string Node::message_name() const {
  std::string n = name();
  if (!follows(VersionGate::MessagesNameForwardOp)) return n;
  const auto at = n.rfind("Backward");
  if (at == std::string::npos) return n;
  const std::string suffix = n.substr(at + 8);
  if (!std::all_of(suffix.begin(), suffix.end(), [](unsigned char c) { return std::isdigit(c); })) return n;
  return n.substr(0, at) + (suffix == "0" ? "" : suffix);
}

std::uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back(InputMetadata{t.sizes(), t.dtype(), t.device()});
  return static_cast<std::uint32_t>(input_metadata_.size() - 1);
}

}  // namespace parity::impl::autograd
