// Schema conformance, as PyTorch's SchemaCheckMode holds its operators to their registered schemas: a step may
// write only the operands its op's ATen schema annotates as written (`Tensor(a!)`), its result may share memory
// only with operands annotated as aliasing a return (`Tensor(a)`), and a return annotated `(a!)` is that very
// operand. Operands that share memory with a writable or aliasable one inherit its permission, as SchemaInfo
// does for aliased inputs. The run loop checks every step on both backends; a violation is a finding of its
// own (DivergenceKind::Schema) even when both backends agree on it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "judge/backend.h"
#include "program/aten_schema.h"

namespace parity::judge {

class SchemaCheck {
 public:
  // Before the step runs: what its operands hold. `defined(id)` says whether a value's contents are defined
  // (uninitialised memory changes from one read to the next: such an operand is not judged).
  template <typename Defined>
  void before(const program::Step& step, Session& session, Defined defined) {
    schema_ = nullptr;
    operands_.clear();
    const program::AtenSchema* schema = program::aten_schema(step.op);
    if (!schema) return;
    // An operand the op may write needs no snapshot: whatever it holds afterwards is allowed.
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const program::SchemaValue* arg = schema->tensor_argument(i);
      operands_.push_back(arg && arg->writes ? Operand{} : snapshot(session, step.inputs[i], defined(step.inputs[i])));
    }
    schema_ = schema;
  }
  // The operands `before` snapshots: those the op may not write.
  std::vector<int> snapshot_ids(const program::Step& step) const {
    std::vector<int> ids;
    if (const program::AtenSchema* schema = program::aten_schema(step.op))
      for (std::size_t i = 0; i < step.inputs.size(); ++i)
        if (const program::SchemaValue* arg = schema->tensor_argument(i); !arg || !arg->writes)
          ids.push_back(step.inputs[i]);
    return ids;
  }
  // After it ran (or raised: an op that fails must not have written what it may not either). Returns one
  // sentence per violation; empty when the step conforms or its op has no schema.
  template <typename Defined>
  std::vector<std::string> after(const program::Step& step, int index, bool ok, Session& session, Defined defined) {
    if (!schema_) return {};
    std::vector<bool> defined_after;
    for (int in : step.inputs) defined_after.push_back(defined(in));
    return check(step, index, ok, session, defined_after);
  }

 private:
  struct Operand {
    std::vector<double> values;
    bool defined = false;
  };
  static Operand snapshot(Session& session, int id, bool defined);
  std::vector<std::string> check(const program::Step& step, int index, bool ok, Session& session,
                                 const std::vector<bool>& defined_after) const;

  const program::AtenSchema* schema_ = nullptr;
  std::vector<Operand> operands_;
};

}  // namespace parity::judge
