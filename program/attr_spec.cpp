#include "program/attr_spec.h"

#include <array>
#include <string>

#include "program/internal_assert.h"

namespace parity::program {

namespace {

// The member pointer each type keeps (see AttrSpec); the types with a field of their own keep none.
#define PARITY_FIELD_Shape(f) .ints = &Attrs::f,
#define PARITY_FIELD_IntList(f) .ints = &Attrs::f,
#define PARITY_FIELD_Int(f) .int64 = &Attrs::f,
#define PARITY_FIELD_Count(f) .int64 = &Attrs::f,
#define PARITY_FIELD_Memo(f) .int64 = &Attrs::f,
#define PARITY_FIELD_Bool(f) .flag = &Attrs::f,
#define PARITY_FIELD_OptionalScalar(f) .bound = &Attrs::f,
#define PARITY_FIELD_Strided(f)
#define PARITY_FIELD_Scalar(f)
#define PARITY_FIELD_DType(f)
#define PARITY_FIELD_MemoryFormat(f)
#define PARITY_FIELD_Seed(f)
#define PARITY_FIELD_Device(f)
#define PARITY_FIELD_OptionalDevice(f)
#define PARITY_FIELD_Elements(f)

const AttrSpec kAttrs[] = {
#define PARITY_ATTR(id_, name_, type_, field_, draw_, spoil_) \
  {.attr = Attr::id_, .name = name_, .type = AttrType::type_, PARITY_FIELD_##type_(field_) .field = #field_},
#include "program/attrs.def"
#undef PARITY_ATTR
};
#undef PARITY_FIELD_Shape
#undef PARITY_FIELD_IntList
#undef PARITY_FIELD_Int
#undef PARITY_FIELD_Count
#undef PARITY_FIELD_Memo
#undef PARITY_FIELD_Bool
#undef PARITY_FIELD_OptionalScalar
#undef PARITY_FIELD_Strided
#undef PARITY_FIELD_Scalar
#undef PARITY_FIELD_DType
#undef PARITY_FIELD_MemoryFormat
#undef PARITY_FIELD_Seed
#undef PARITY_FIELD_Device
#undef PARITY_FIELD_OptionalDevice
#undef PARITY_FIELD_Elements

using T = AttrType;

// Rows in Attr order, each with the field its type needs: checked once, so no lookup can find a wrong row.
bool rows_are_consistent() {
  for (std::size_t i = 0; i < std::size(kAttrs); ++i) {
    const AttrSpec& s = kAttrs[i];
    const bool ok = static_cast<std::size_t>(s.attr) == i &&
                    ((s.type == T::Shape || s.type == T::IntList) == (s.ints != nullptr)) &&
                    ((s.type == T::Int || s.type == T::Count || s.type == T::Memo) == (s.int64 != nullptr)) &&
                    ((s.type == T::Bool) == (s.flag != nullptr)) &&
                    ((s.type == T::OptionalScalar) == (s.bound != nullptr));
    PARITY_HARNESS_ASSERT(ok, "attribute table row " + std::to_string(i) + " (" + std::string(s.name) +
                                  ") is out of Attr order or lacks the field of its type");
  }
  return true;
}

}  // namespace

const AttrSpec& attr_spec(Attr a) {
  static const bool checked = rows_are_consistent();
  (void)checked;
  const auto i = static_cast<std::size_t>(a);
  PARITY_HARNESS_ASSERT(i < std::size(kAttrs), "Attr " + std::to_string(i) + " has no row in the attribute table");
  return kAttrs[i];
}

}  // namespace parity::program
