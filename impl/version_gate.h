// The behaviours in which PyTorch releases differ and impl follows the one its target release has
// (impl/torch_version.h): one row of impl/version_gates.def each. Code that differs by release asks
// `follows(VersionGate::X)` and nothing else, so the table is every place impl is version-aware.
#pragma once
#include <span>
#include <string_view>

#include "impl/torch_version.h"

namespace parity::impl {

enum class VersionGate {
#define PARITY_VERSION_GATE(name, since_major, since_minor, what, before, after, where) name,
#include "impl/version_gates.def"
#undef PARITY_VERSION_GATE
};

struct VersionGateRow {
  VersionGate gate;
  std::string_view name;
  TorchVersion since;      // the first release with the new behaviour (see `where` for how sure that is)
  std::string_view what;   // the behaviour
  std::string_view before; // what releases before `since` do
  std::string_view after;  // what `since` and later do
  std::string_view where;  // where PyTorch changed it, when known
};

std::span<const VersionGateRow> version_gates();
const VersionGateRow& version_gate(VersionGate gate);

// Whether `release` has the new behaviour of `gate`.
inline bool follows(VersionGate gate, TorchVersion release) { return release >= version_gate(gate).since; }
// Whether the release chosen on this thread has it (impl/torch_version.h: an internal assertion when none is).
inline bool follows(VersionGate gate) { return follows(gate, followed_release()); }

}  // namespace parity::impl
