// Per-op coverage of the situations an op's operands can be in, as PyTorch's OpInfo tests sample each op with
// each class of input: "mul_:shared_storage" is a step of mul_ whose destination shares its storage with another
// operand. A bug that shows only where one op meets one such situation hides from the op counts and from the
// situations alone; these keys tell a campaign which meetings it never made, and coverage guidance
// (engine/corpus.h) aims its mutations at them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "program/op_table.h"

namespace parity::judge {

// The names are report keys (run.json's coverage.op_operands, "op:class"): keep them.
#define PARITY_OPERAND_CLASSES(X)                                                                                 \
  X(ViewWritten, "view_written")       /* an operand is a view of a storage written before (its version > 0) */ \
  X(SharedStorage, "shared_storage")   /* the op writes operand 0, which shares its storage with another */     \
  X(ZeroDimOther, "zero_dim_other")    /* a later operand is 0-dim, of another dtype than operand 0 */         \
  X(EdgeScalar, "edge_scalar")         /* the step's scalar is a dtype edge (program::is_edge_scalar) */         \
  X(GradOperand, "grad_operand")       /* an operand is a .grad (a grad step's value) */                        \
  X(MemoStorage, "memo_storage")       /* deepcopy: its memo copied another tensor of the same storage */      \
  X(MemoGrad, "memo_grad")             /* deepcopy: its memo copied its .grad, or the tensor whose .grad it is */

#define PARITY_OPERAND_CLASS_ENTRY(name, str) name,
enum class OperandClass : std::uint8_t { PARITY_OPERAND_CLASSES(PARITY_OPERAND_CLASS_ENTRY) };
#define PARITY_OPERAND_CLASS_COUNT(name, str) +1
inline constexpr std::size_t kOperandClassCount = 0 PARITY_OPERAND_CLASSES(PARITY_OPERAND_CLASS_COUNT);
#undef PARITY_OPERAND_CLASS_COUNT
#undef PARITY_OPERAND_CLASS_ENTRY

std::string_view to_string(OperandClass);

// Whether a step of `op` can be in that situation (a scalar only where the op reads one, a shared destination
// only where it writes one beside another operand, ...): only those pairs are keys. Device-only ops are none.
bool can_meet(const program::OpSpec& op, OperandClass c);

struct OpOperandKey {
  program::OpId op;
  OperandClass operand_class;
  bool operator==(const OpOperandKey&) const = default;
};

// Every key, op table order then class order, and their names ("mul_:shared_storage"), index for index.
const std::vector<OpOperandKey>& op_operand_keys();
const std::vector<std::string>& op_operand_names();
// The index of a key in both; nullopt for a pair can_meet refuses.
std::optional<std::size_t> op_operand_index(OpOperandKey);
std::optional<std::size_t> op_operand_index(std::string_view name);

}  // namespace parity::judge
