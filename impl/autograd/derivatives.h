// The table of backward nodes (impl/autograd/derivatives.def): each node's PyTorch name, the forward ops that
// record it, its formula and what it saves, in save order. Nodes are made from a Derivative, so a grad_fn name
// impl shows can come from nowhere else.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace parity::impl::autograd {

enum class Derivative : std::uint8_t {
#define PARITY_DERIVATIVE(node, kind, ops, formula, ...) node,
#include "impl/autograd/derivatives.def"
#undef PARITY_DERIVATIVE
};

// How PyTorch names the node: Generated nodes (derivatives.yaml's codegen) by their class name, Manual ones
// (torch/csrc/autograd/functions/) by their demangled C++ name, namespace included.
enum class NodeKind : std::uint8_t { Generated, Manual };

struct DerivativeRow {
  Derivative id;
  NodeKind kind;
  std::string_view name;     // as grad_fn.name() shows it
  std::string_view ops;      // the forward ops that record it
  std::string_view formula;  // each input's gradient, in derivatives.yaml's words
  std::vector<std::string_view> saved;  // what it may save, in save order
};

std::span<const DerivativeRow> derivatives();
const DerivativeRow& derivative(Derivative d);
// The position of `saved_name` in d's save order; an internal assertion when d saves no tensor of that name.
std::size_t saved_position(Derivative d, std::string_view saved_name);

}  // namespace parity::impl::autograd
