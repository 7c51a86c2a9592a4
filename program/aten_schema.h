// An op's ATen schema, as the dispatcher registers it (`aten::add_.Tensor(Tensor(a!) self, Tensor other, *,
// Scalar alpha=1) -> Tensor(a!)`), reduced to what schema conformance reads: which arguments and returns are
// tensors, and their alias annotations. `(a)` says a return may alias the argument of the same set; `(a!)` says
// the op may write it; `(a -> *)` says its elements go into a list (unbind). PyTorch's SchemaCheckMode holds
// every operator to these annotations; parity's run loop does the same on both backends (judge/run.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parity::program {

enum class OpId : std::uint8_t;

struct SchemaValue {
  std::string name;       // "" for an unnamed return
  std::string type;       // "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int[1]?", ... without the annotation
  std::string alias_set;  // "a" in Tensor(a) / Tensor(a!) / Tensor(a -> *); "" when unannotated
  bool writes = false;    // (a!)
  bool keyword_only = false;  // after the `*` of the argument list
  bool tensor() const { return type.starts_with("Tensor"); }
  bool operator==(const SchemaValue&) const = default;
};

struct AtenSchema {
  std::string name;      // "aten::add_"
  std::string overload;  // "Tensor"; "" for the default overload
  std::vector<SchemaValue> arguments;
  std::vector<SchemaValue> returns;
  // The i-th tensor argument: a program step's operand i. Steps pass tensors in schema order, but for an out=
  // overload, whose written (out) arguments come first, as in ATen's C++ API (at::add_out(out, self, other)).
  const SchemaValue* tensor_argument(std::size_t i) const;
  // The first return in `argument`'s alias set, or nullptr when no return may alias it.
  const SchemaValue* return_aliasing(const SchemaValue& argument) const;
};

// Parses the schema text; throws std::invalid_argument naming what is malformed.
AtenSchema parse_aten_schema(std::string_view text);

// The op's parsed schema (OpSpec::schema, parsed once per process); nullptr for an op the table gives none.
const AtenSchema* aten_schema(OpId);

}  // namespace parity::program
