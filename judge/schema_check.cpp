#include "judge/schema_check.h"

#include <algorithm>
#include <cmath>

#include "program/internal_assert.h"

namespace parity::judge {

using program::OpSpec;
using program::ResultIs;
using program::SchemaValue;
using program::spec;
using program::Step;

namespace {

// Bitwise equality up to NaN payloads: a write of the same value is no write.
bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

std::string operand_name(const SchemaValue& arg, std::size_t i) {
  return "`" + arg.name + "` (operand " + std::to_string(i) + ")";
}

}  // namespace

SchemaCheck::Operand SchemaCheck::snapshot(Session& session, int id, bool defined) {
  return {defined ? session.values(id) : std::vector<double>{}, defined};
}

std::vector<std::string> SchemaCheck::check(const Step& step, int index, bool ok, Session& session,
                                            const std::vector<bool>& defined_after) const {
  const OpSpec& op = spec(step.op);
  // Only a violation names the operator: the check runs on every step.
  auto qualified = [&] { return schema_->name + (schema_->overload.empty() ? "" : "." + schema_->overload); };
  std::vector<std::string> violations;
  std::vector<const void*> writable, aliasable;
  std::vector<const SchemaValue*> args;
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    const SchemaValue* arg = schema_->tensor_argument(i);
    PARITY_HARNESS_ASSERT(arg, "op `" + std::string(op.name) + "` has more operands than " + qualified() + " has tensors");
    args.push_back(arg);
    const void* storage = session.storage_key(step.inputs[i]);
    if (arg->writes) writable.push_back(storage);
    if (schema_->return_aliasing(*arg)) aliasable.push_back(storage);
  }
  auto among = [](const std::vector<const void*>& keys, const void* k) {
    return std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    const int in = step.inputs[i];
    if (args[i]->writes || among(writable, session.storage_key(in))) continue;
    const Operand now = snapshot(session, in, operands_[i].defined && defined_after[i]);
    // Values decide, as in SchemaCheckMode: a version can move without a write, since set_data leaves a tensor
    // sharing its version counter with tensors over another storage (its views, a detached alias of its old
    // data). Undefined contents (uninitialised memory) cannot show a write, so they are not judged.
    std::string how;
    if (now.defined && !same_values(now.values, operands_[i].values)) how = "its values changed";
    if (!how.empty())
      violations.push_back("wrote " + operand_name(*args[i], i) + ", which " + qualified() +
                           " does not annotate as written (Tensor(a!)): " + how);
  }
  if (!ok || !op.has_value() || !session.has_value(index)) return violations;
  const void* result = session.storage_key(index);
  // unsafe_split and unsafe_chunk return aliases their schemas leave unannotated: that is what PyTorch's
  // "unsafe" names (the results are not views and autograd does not track the sharing).
  if (op.result != ResultIs::UnsafeAlias && !among(aliasable, result)) {
    for (std::size_t i = 0; i < step.inputs.size(); ++i)
      if (session.storage_key(step.inputs[i]) == result) {
        violations.push_back("its result shares storage with " + operand_name(*args[i], i) + ", which " + qualified() +
                             " does not annotate as aliasing a return (Tensor(a))");
        break;
      }
  }
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    const SchemaValue* ret = schema_->return_aliasing(*args[i]);
    if (ret && ret->writes && session.tensor_key(index) != session.tensor_key(step.inputs[i]))
      violations.push_back("returned another tensor than " + operand_name(*args[i], i) + ", which " + qualified() +
                           " returns itself (Tensor(a!))");
  }
  return violations;
}

}  // namespace parity::judge
