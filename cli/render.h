// Text for people: divergences and step outcomes as `parity` prints them.
#pragma once
#include <string>
#include <string_view>

#include "judge/compare.h"
#include "judge/trace.h"
#include "program/program.h"
#include "reports/oracle.h"

namespace parity::cli {

// "add:values at step 3 (add), value v3: impl element 0 of 4 = 1 | libtorch element 0 of 4 = 2", each side named
// as given (a drift's two LibTorch releases, two protocol backends' libraries).
std::string describe_divergence(const program::Program&, const judge::Divergence&, std::string_view impl_side,
                                std::string_view oracle_side);
// The same with impl's side "impl" and the judging side named by its oracle ("libtorch", "impl-cpu").
std::string describe_divergence(const program::Program&, const judge::Divergence&,
                                reports::Oracle oracle = reports::Oracle::LibTorch);
// One step's outcome in a column: "ok v3 [2, 3] float32 strides [3, 1]", "error(shape)", "skipped".
std::string describe_step(const judge::StepObs&, int step);
// Text read from a file (a finding's fields, messages quoting it), made safe to print on a terminal: every
// control character but newline and tab is written as a visible escape (ESC as \x1b, a C1 control such as
// U+009B as \u009b), so that a hostile finding cannot move the cursor, recolour or retitle the terminal.
std::string terminal_safe(std::string_view text);
// A message for one terminal line: newlines and tabs become spaces, the length is capped (at `max` bytes of the
// message, before escaping), then terminal_safe.
std::string one_line(std::string text, std::size_t max = 1000);

}  // namespace parity::cli
