#include "judge/operand_class.h"

#include <array>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "program/internal_assert.h"

namespace parity::judge {

namespace {

#define PARITY_OPERAND_CLASS_NAME(name, str) str,
constexpr std::string_view kClassNames[] = {PARITY_OPERAND_CLASSES(PARITY_OPERAND_CLASS_NAME)};
#undef PARITY_OPERAND_CLASS_NAME

constexpr std::size_t kNoKey = SIZE_MAX;

struct Universe {
  std::vector<OpOperandKey> keys;
  std::vector<std::string> names;
  std::unordered_map<std::string_view, std::size_t> by_name;
  // Per OpId and class: the key's index, kNoKey where can_meet refuses. Coverage asks once per operand of
  // every step of every case.
  std::vector<std::array<std::size_t, kOperandClassCount>> at;
  Universe() : at(program::op_table().size()) {
    for (const program::OpSpec& op : program::op_table()) {
      auto& row = at[static_cast<std::size_t>(op.id)];
      row.fill(kNoKey);
      for (std::size_t c = 0; c < kOperandClassCount; ++c)
        if (can_meet(op, static_cast<OperandClass>(c))) {
          row[c] = keys.size();
          keys.push_back({op.id, static_cast<OperandClass>(c)});
          names.push_back(std::string(op.name) + ":" + std::string(kClassNames[c]));
        }
    }
    for (std::size_t i = 0; i < names.size(); ++i) by_name.emplace(names[i], i);
  }
};

const Universe& universe() {
  static const Universe u;
  return u;
}

}  // namespace

std::string_view to_string(OperandClass c) { return kClassNames[static_cast<std::size_t>(c)]; }

bool can_meet(const program::OpSpec& op, OperandClass c) {
  if (op.device_only) return false;
  switch (c) {
    case OperandClass::ViewWritten:
    case OperandClass::GradOperand: return op.arity >= 1;
    case OperandClass::SharedStorage: return (op.is_inplace() || op.out_of) && op.arity >= 2;
    case OperandClass::ZeroDimOther: return op.arity >= 2;
    case OperandClass::EdgeScalar: return op.reads(program::Attr::Scalar);
    case OperandClass::MemoStorage:
    case OperandClass::MemoGrad: return op.id == program::OpId::Deepcopy;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this operand class");
}

const std::vector<OpOperandKey>& op_operand_keys() { return universe().keys; }
const std::vector<std::string>& op_operand_names() { return universe().names; }

std::optional<std::size_t> op_operand_index(OpOperandKey key) {
  const std::size_t at =
      universe().at[static_cast<std::size_t>(key.op)][static_cast<std::size_t>(key.operand_class)];
  if (at == kNoKey) return std::nullopt;
  return at;
}

std::optional<std::size_t> op_operand_index(std::string_view name) {
  const auto& by_name = universe().by_name;
  const auto at = by_name.find(name);
  if (at == by_name.end()) return std::nullopt;
  return at->second;
}

}  // namespace parity::judge
