// Attributes of one step, chosen by Attr kind from the operands' metadata: well-typed values (the op table's
// rule accepts them most of the time; callers check), and single deliberate spoilings that make a step
// ill-typed in one specific way (a dim out of range, a wrong view size, preserve_format for contiguous...).
#pragma once
#include <span>

#include "generators/rng.h"
#include "program/program.h"

namespace parity::generators {

// `storage_numel` bounds as_strided views: the elements of operand 0's storage known to exist. `cuda`: devices are
// drawn (cpu or cuda); otherwise every device is cpu (None for the _like factories) and nothing is drawn for it.
program::Attrs valid_attrs(Rng&, program::OpId, std::span<const program::Meta> operands, std::int64_t storage_numel,
                           bool cuda = false);

// A scalar for `op` on `operands` from the edges of its dtype (generators/boundary_values.h), as a step's
// Attr::Scalar: what a mutation that moves a scalar to a boundary sets.
program::Scalar edge_scalar(Rng&, program::OpId, std::span<const program::Meta> operands);

// Changes one attribute of `attrs` towards an ill-typed step; false when the op has no attribute that can be
// spoiled (the caller then tries ill-typed operands instead).
bool spoil_attrs(Rng&, program::OpId, std::span<const program::Meta> operands, program::Attrs& attrs);

}  // namespace parity::generators
