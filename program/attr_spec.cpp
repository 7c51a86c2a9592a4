#include "program/attr_spec.h"

#include <array>
#include <string>

#include "program/internal_assert.h"

namespace parity::program {

namespace {

using T = AttrType;

// clang-format off
const AttrSpec kAttrs[] = {
  {Attr::Sizes,        "sizes",         T::Shape,          &Attrs::sizes},
  {Attr::ViewSizes,    "sizes",         T::Shape,          &Attrs::sizes},
  {Attr::ExpandSizes,  "sizes",         T::Shape,          &Attrs::sizes},
  {Attr::Strided,      "strided",       T::Strided},
  {Attr::Dims,         "dims",          T::IntList,        &Attrs::dims},
  {Attr::Dim,          "dim",           T::Int,            nullptr, &Attrs::dim},
  {Attr::Dim1,         "dim1",          T::Int,            nullptr, &Attrs::dim1},
  {Attr::Start,        "start",         T::Int,            nullptr, &Attrs::start},
  {Attr::End,          "end",           T::Int,            nullptr, &Attrs::end},
  {Attr::Step,         "step",          T::Int,            nullptr, &Attrs::step},
  {Attr::Index,        "index",         T::Int,            nullptr, &Attrs::index},
  {Attr::Length,       "length",        T::Int,            nullptr, &Attrs::length},
  {Attr::Scalar,       "scalar",        T::Scalar},
  {Attr::MemoryFormat, "memory_format", T::MemoryFormat},
  {Attr::DType,        "dtype",         T::DType},
  {Attr::RequiresGrad, "requires_grad", T::Bool,           nullptr, nullptr, &Attrs::requires_grad},
  {Attr::Keepdim,      "keepdim",       T::Bool,           nullptr, nullptr, &Attrs::keepdim},
  {Attr::RetainGraph,  "retain_graph",  T::Bool,           nullptr, nullptr, &Attrs::retain_graph},
  {Attr::Seed,         "seed",          T::Seed},
  {Attr::Offset,       "offset",        T::Int,            nullptr, &Attrs::offset},
  {Attr::Min,          "min",           T::OptionalScalar, nullptr, nullptr, nullptr, &Attrs::min},
  {Attr::Max,          "max",           T::OptionalScalar, nullptr, nullptr, nullptr, &Attrs::max},
  {Attr::Size,         "size",          T::Count,          nullptr, &Attrs::size},
  {Attr::Chunks,       "chunks",        T::Count,          nullptr, &Attrs::chunks},
  {Attr::Copy,         "copy",          T::Bool,           nullptr, nullptr, &Attrs::copy},
  {Attr::Memo,         "memo",          T::Memo,           nullptr, &Attrs::memo},
  {Attr::SplitSizes,   "split_sizes",   T::IntList,        &Attrs::dims},
  {Attr::Accumulate,   "accumulate",    T::Bool,           nullptr, nullptr, &Attrs::accumulate},
  {Attr::AllowUnused,  "allow_unused",  T::Bool,           nullptr, nullptr, &Attrs::allow_unused},
  {Attr::CreateGraph,  "create_graph",  T::Bool,           nullptr, nullptr, &Attrs::create_graph},
  {Attr::Device,       "device",        T::Device},
  {Attr::LikeDevice,   "device",        T::OptionalDevice},
};
// clang-format on

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
