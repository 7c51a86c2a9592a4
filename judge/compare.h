// Compares two traces of the same program, metadata before values, and returns the first difference.
#pragma once
#include <optional>
#include <string>

#include "judge/divergence_kind.h"
#include "judge/error_category.h"
#include "judge/signature.h"
#include "judge/trace.h"
#include "program/program.h"

namespace parity::judge {

struct Divergence {
  enum class Severity { Major, Minor };  // minor: strides differ only in size-1 dims or empty tensors
  int step = -1;       // first differing step
  int value = -1;      // value observed at that step, -1 for the step's own outcome
  DivergenceKind kind = DivergenceKind::Values;  // which observation differed
  std::string impl;    // each side's observation, rendered for a person
  std::string oracle;
  Severity severity = Severity::Major;
  // The category of each side whose step raised (or died: crash, timeout); signatures group by it.
  std::optional<ErrorCategory> impl_category;
  std::optional<ErrorCategory> oracle_category;
  // Crash: the signal that killed the process ("SIGSEGV", engine::signal_name); empty when it exited, or ended
  // its answer early. Signatures group by it: a segfault and an abort are different bugs.
  std::string signal = {};
  bool operator==(const Divergence&) const = default;
};

struct Tolerance {
  double rtol;
  double atol;
};
Tolerance tolerance(program::DType);

std::optional<Divergence> compare(const Trace& impl, const Trace& oracle);

// One side of a divergence of `kind` about a tensor's metadata, as compare() renders it (its Divergence::impl or
// ::oracle): sizes to grad_strides_size1, values and grad_values aside. A repro renders its live observation the
// same way and holds it against both sides (reports/repro_check.h). nullopt for the other kinds.
std::optional<std::string> observation_text(DivergenceKind, const TensorObs&);
// An error message with what varies from run to run taken out (addresses), as compare() holds messages.
std::string normalised_message(std::string_view);

std::string_view to_string(Divergence::Severity);

// What groups findings: the op of the first differing step (Signature::kProgramOp when the divergence is not
// tied to a step), the kind, for status and error_category (and grad_fn refused on both sides) the error
// categories, and for a crash by a signal the signal.
Signature signature(const program::Program&, const Divergence&);

}  // namespace parity::judge
