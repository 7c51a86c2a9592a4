// Repro printers: a Program as a C++ (LibTorch) program and as a Python (PyTorch) script, driven by the op
// table's templates. Steps that raised on the oracle are wrapped so the script prints the error and goes on.
#pragma once
#include <string>

#include "program/program.h"
#include "program/trace.h"

namespace parity::program {

std::string cpp_repro(const Program&, const Trace* oracle = nullptr);
std::string python_repro(const Program&, const Trace* oracle = nullptr);

}  // namespace parity::program
