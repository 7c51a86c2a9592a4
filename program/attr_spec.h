// The attribute table: every per-attribute fact (its name in JSON, program text and repro templates, the type of
// its value, the field of Attrs that holds it) in one row of program/attrs.def. The JSON codec, the program
// printer and the repro printers switch over the value's type, not over attributes, so a new attribute of an
// existing type is one Attrs field and one row there, which names its generation rules (generators/attr_gen.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "program/program.h"

namespace parity::program {

enum class AttrType : std::uint8_t {
  Shape,           // sizes of a tensor (bounded element count when read)
  Strided,         // sizes, strides and offset (the JSON keys sizes, strides, offset)
  IntList,         // a list of dims
  Int,             // any int64 (a dim, an index, a bound)
  Count,           // a piece size or count, bounded by the largest tensor a program may hold
  Memo,            // names a variable in the repros: 0 .. INT_MAX
  Bool,
  Scalar,          // a Python number: int, float or bool
  OptionalScalar,  // a Python number or None
  DType,
  MemoryFormat,
  Seed,            // an unsigned 64-bit seed
  Device,          // cpu or cuda
  OptionalDevice,  // cpu, cuda or None
  Elements,        // a literal nested list's Python numbers, flat and row-major; its shape is the step's sizes
};

struct AttrSpec {
  Attr attr;
  std::string_view name;  // JSON key (but Strided's three) and repro placeholder
  AttrType type;
  // The field of Attrs holding the value, for the types that several attributes share; Strided, Scalar, DType,
  // MemoryFormat, Seed, Device, OptionalDevice and Elements each have one field of their own.
  std::vector<std::int64_t> Attrs::*ints = nullptr;  // Shape, IntList
  std::int64_t Attrs::*int64 = nullptr;              // Int, Count, Memo
  bool Attrs::*flag = nullptr;                       // Bool
  std::optional<Scalar> Attrs::*bound = nullptr;     // OptionalScalar
  // The member's name, for code generated from the table (the oracle's dispatch, oracle/dispatch_gen.cpp).
  std::string_view field;
};

const AttrSpec& attr_spec(Attr);

}  // namespace parity::program
