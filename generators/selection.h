// Which ops and dtypes a campaign's programs may use (`--ops`, `--skip-ops`, `--dtypes`, and what a protocol
// backend declares: docs/backend-protocol.md). The generator draws its programs as ever and then drops every step
// outside the selection with every step that depends on it, so recipes and factories need no knowledge of it and
// a seed still names one program; a program's shrinks are selected the same way.
#pragma once
#include <vector>

#include "program/op_table.h"
#include "program/program.h"
#include "program/types.h"

namespace parity::generators {

struct Selection {
  std::vector<bool> ops;               // per OpId; empty: every op
  std::vector<program::DType> dtypes;  // empty: every dtype

  bool everything() const;
  bool allows(const program::Step& step) const;
  bool operator==(const Selection&) const = default;
};

// `p` without the steps `selection` does not allow and every step that uses their values; inputs renumbered.
program::Program select_steps(const program::Program& p, const Selection& selection);

}  // namespace parity::generators
