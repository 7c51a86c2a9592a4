// The op table's pointwise ops of one tensor and no attribute (sigmoid, log, ...), for tests that run each: a new
// one is run without a line of its own.
#pragma once
#include <vector>

#include "program/op_table.h"

namespace parity::testing {

// Those of `kind`: Arithmetic, or InPlace for their in-place forms.
inline std::vector<program::OpId> unary_ops(program::OpKind kind) {
  std::vector<program::OpId> out;
  for (const program::OpSpec& op : program::op_table()) {
    const program::OpSpec& of = op.inplace_of ? program::spec(*op.inplace_of) : op;
    if (op.kind == kind && op.arity == 1 && op.attrs.empty() && of.kind == program::OpKind::Arithmetic)
      out.push_back(op.id);
  }
  return out;
}

}  // namespace parity::testing
