// Coverage: what one case exercised, so that a campaign can show that every op, layout kind, memory format,
// error category and autograd situation it is meant to test was actually reached (a green run that never
// wrote in place to a view tests nothing about views). Everything is judged on the LibTorch trace: the oracle
// decides what a step did, impl's behaviour is what is being tested.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "judge/operand_class.h"
#include "judge/role_combinations.h"
#include "judge/trace.h"
#include "program/program.h"

namespace parity::judge {

// What one case exercised, one dimension per vector. Ops and error categories are not here: the parent
// process counts them from the per-step outcomes it already receives.
struct CoverageTags {
  // One entry per tensor operand of each step LibTorch executed ok: its layout kind, plus "offset" when its
  // storage offset is positive.
  std::vector<std::string> layouts;
  // One entry per step LibTorch executed ok whose op reads Attr::MemoryFormat: the requested format.
  std::vector<std::string> memory_formats;
  // One entry per step LibTorch executed ok with a result: the result's dtype.
  std::vector<std::string> dtypes;
  // Each situation (all_situations()) the case exercised, once, in all_situations() order. A situation that
  // sets up a check counts when LibTorch ran the step, raising or not (a refused in-place write is the
  // situation); one that is a success (a copy, a backward, reading gradients) only when the step was ok.
  std::vector<std::string> situations;
  // Two tensor events (tensor_events()) on one tensor, counted when the second happens: where bugs hide that
  // each event alone does not show. "a+b", a < b, in situation_pairs() order, once per case.
  std::vector<std::string> situation_pairs;
  // The same events keyed by the role of the tensor each happened to, paired and tripled in the order they
  // happened (judge/role_combinations.h), each once per case in role_pairs() and role_triples() order.
  std::vector<std::string> role_pairs;
  std::vector<std::string> role_triples;
  // Each differentiable op (backward_through_ops()) whose result was in the graph of a backward LibTorch ran ok,
  // once per case: the op's derivative was exercised, not only its forward.
  std::vector<std::string> backward_through;
  // Each op × operand situation a step met (judge/operand_class.h), once per case in op_operand_names() order,
  // whether LibTorch ran the step ok or raised.
  std::vector<std::string> op_operands;
  bool operator==(const CoverageTags&) const = default;
};

// `oracle` is LibTorch's trace of `program`. Total over any program and trace (steps beyond the shorter of
// the two, skipped steps and missing observations are ignored), so a hand-written program cannot break it.
CoverageTags coverage_tags(const program::Program& program, const Trace& oracle);

// The layout kind of an observed tensor (layout_kinds() less "offset"): the first that applies of zero_dim,
// empty, overlapping (a 0 stride on a dim of size > 1), contiguous, channels_last, channels_last_3d,
// dense_non_contiguous (permuted dense), non_dense (gaps).
std::string_view layout_kind(const TensorObs&);

// The keys a campaign is expected to reach, per dimension, in report order. The role tables count every key of
// role_pairs() and role_triples() a case met, and op_operands every op_operand_names() key; only their goals
// are here.
struct CoverageDimension {
  // "ops", "layouts", "memory_formats", "dtypes", "error_categories", "situations", "situation_pairs",
  // "backward_through", "role_pairs", "role_triples", "op_operands" (no goal: many of its keys no program can
  // meet, such as an edge scalar no dtype of the op accepts; the tables show what was met)
  std::string_view name;
  std::vector<std::string> keys;
};
const std::vector<CoverageDimension>& coverage_dimensions();

const std::vector<std::string>& all_situations();
// Every pair of tensor_events() (judge/role_combinations.h), "a+b" with a < b.
const std::vector<std::string>& situation_pairs();
// Ops whose result can require grad and have a derivative: not factories, autograd steps, detached results
// (detach, .data, new_tensor, deepcopy, detach_) or results that never require grad.
const std::vector<std::string>& backward_through_ops();
const std::vector<std::string>& layout_kinds();
const std::vector<std::string>& memory_format_names();
const std::vector<std::string>& dtype_names();  // every DType, kAllDTypes order
// Every op of the op table.
const std::vector<std::string>& op_names();
// Every error category a correct program can make LibTorch raise: crash, timeout, internal_assert and
// unclassified are failures of a backend or of the classification table, never a goal.
const std::vector<std::string>& expected_error_categories();

}  // namespace parity::judge
