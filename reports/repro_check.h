// The check a repro makes of itself: the observation that differed first in the finding, made live on the
// LibTorch (or PyTorch) that runs the repro and held against what the library under test produced there. The
// repro prints both sides and the judge's recorded one, then PASS (the library does what this LibTorch does) or
// FAIL, so that it stands alone: in a bug report, in the library's own test suite, under another release.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/compare.h"
#include "judge/trace.h"
#include "reports/finding.h"
#include "reports/repro_literal.h"

namespace parity::reports {

// What a repro knows beyond its program. All optional: a program alone makes a repro that only shows values.
struct ReproSides {
  const judge::Trace* judge = nullptr;    // the judge's trace: which steps raised, and the side it recorded
  const judge::Trace* library = nullptr;  // the library under test's trace of the same evaluation
  std::optional<judge::Divergence> point;  // the finding's first difference: what the repro checks
  std::optional<judge::Divergence> now;    // this evaluation's first difference (sides of unobservable kinds)
  std::string judge_name;   // "LibTorch 2.15.0", "impl on the CPU"
  std::string found_by;     // the parity commit that made the finding (empty: this one, now)
};

struct ReproCheck {
  enum class Live {
    Tensor,         // a value's metadata, rendered as judge::observation_text renders it
    Element,        // the elements of a value (values) or of its .grad (grad_values), within the dtype's tolerance
    Status,         // whether the step ran: "ok" or "raised" (the library may also have crashed, hung, ...)
    Message,        // the step's error message, normalised (error_category, message)
    ExceptionType,  // the class the step raised
    Recorded,       // not observable by a repro (schema, observed_set, ...): the judge's recorded side stands in
  };
  Live live = Live::Recorded;
  judge::DivergenceKind kind = judge::DivergenceKind::Values;
  int step = -1;   // the repro checks right after this step; -1: after the whole program
  int value = -1;  // the value observed, -1 for the step's own outcome
  // Each side as the live observation renders it. ExceptionType: the step's class where it raised (each
  // language names it its own way), with the text for a side that did not raise.
  std::string library, judge;
  std::optional<judge::ExceptionType> library_exception, judge_exception;
  // Element: each side's elements (library_values empty and library_has_values false: it made no value), and
  // the dtype's tolerance, as judge::compare holds them.
  std::vector<double> library_values, judge_values;
  bool library_has_values = false;
  judge::Tolerance tolerance{0, 0};
  std::string why_recorded;  // Recorded: why a repro cannot make the observation
};

// A finding's own sides, as its record holds them (its report's repros). Judged by impl on the CPU, the repro's
// LibTorch judged neither side: only the judge's trace is set, and the repro only shows values.
ReproSides finding_repro_sides(const Finding&);

// The check of `sides.point`, or nullopt when there is no point to check.
std::optional<ReproCheck> repro_check(const ReproSides& sides);

// The Python class a LibTorch exception becomes (torch/csrc/Exceptions.h), as a Python repro names it in an
// `except` clause and in an exception_type check; empty for Other, which no Python class names.
std::string_view python_exception_class(judge::ExceptionType);

// Printing it (reports/repro.cpp puts the pieces in place). The helpers (observe, check, finish), once, before
// main() or at module level:
std::string_view check_prelude(ReproLang);
// The check's statement, right after its step: `values` are the ids of the program values defined by then, and
// `raised` names the variable that holds what the step raised (a std::exception_ptr; None in Python).
std::string check_statements(const ReproCheck&, ReproLang, const std::vector<int>& values, std::string_view raised);
// The repro's last statement: PASS or FAIL, and the exit status to match.
std::string_view check_finish(ReproLang);

}  // namespace parity::reports
