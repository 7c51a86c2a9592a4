#include "impl/autograd/derivatives.h"

#include <string>

#include "impl/error.h"

namespace parity::impl::autograd {

namespace {
#define PARITY_NODE_NAME_Generated(node) #node
#define PARITY_NODE_NAME_Manual(node) "torch::autograd::" #node

const std::vector<DerivativeRow>& rows() {
  static const std::vector<DerivativeRow> table = {
#define PARITY_DERIVATIVE(node, kind, ops, formula, ...) \
  {Derivative::node, NodeKind::kind, PARITY_NODE_NAME_##kind(node), ops, formula, {__VA_ARGS__}},
#include "impl/autograd/derivatives.def"
#undef PARITY_DERIVATIVE
  };
  return table;
}

#undef PARITY_NODE_NAME_Generated
#undef PARITY_NODE_NAME_Manual
}  // namespace

std::span<const DerivativeRow> derivatives() { return rows(); }

const DerivativeRow& derivative(Derivative d) {
  const auto i = static_cast<std::size_t>(d);
  PARITY_INTERNAL_ASSERT(i < rows().size() && rows()[i].id == d, "derivative table out of order");
  return rows()[i];
}

std::size_t saved_position(Derivative d, std::string_view saved_name) {
  const DerivativeRow& row = derivative(d);
  for (std::size_t i = 0; i < row.saved.size(); ++i)
    if (row.saved[i] == saved_name) return i;
  PARITY_UNREACHABLE(std::string(row.name) + " saves no tensor named \"" + std::string(saved_name) +
                     "\" (impl/autograd/derivatives.def lists what each node saves)");
}

}  // namespace parity::impl::autograd
