#include "impl/version_gate.h"

#include <array>

#include "impl/error.h"

namespace parity::impl {

namespace {
constexpr VersionGateRow kRows[] = {
#define PARITY_VERSION_GATE(name, since_major, since_minor, what, before, after, where) \
  {VersionGate::name, #name, TorchVersion{since_major, since_minor}, what, before, after, where},
#include "impl/version_gates.def"
#undef PARITY_VERSION_GATE
};
}  // namespace

std::span<const VersionGateRow> version_gates() { return kRows; }

const VersionGateRow& version_gate(VersionGate gate) {
  const auto i = static_cast<std::size_t>(gate);
  PARITY_INTERNAL_ASSERT(i < std::size(kRows) && kRows[i].gate == gate, "version gate table out of order");
  return kRows[i];
}

}  // namespace parity::impl
