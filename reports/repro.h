// Repro printers: a Program as a C++ (LibTorch) program and as a Python (PyTorch) script, driven by the op
// table's templates. Steps that raised on the judge are wrapped so the script prints the error and goes on; with
// a finding's sides, the repro checks the first difference itself and ends with PASS or FAIL
// (reports/repro_check.h).
#pragma once
#include <string>

#include "judge/trace.h"
#include "program/program.h"
#include "reports/repro_check.h"

namespace parity::reports {

std::string cpp_repro(const program::Program&, const ReproSides& sides = {});
std::string python_repro(const program::Program&, const ReproSides& sides = {});
// Step `index`'s line of the Python repro, without its no_grad block: `v3 = v1.mul(v2)`, `v2.backward(...)`. A
// protocol backend with the "python" feature runs it (docs/backend-protocol.md).
std::string python_statement(const program::Step& step, int index);

}  // namespace parity::reports
