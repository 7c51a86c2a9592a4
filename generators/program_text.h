// A compact one-line-per-step rendering of a program, for counterexamples and test messages (the C++ and
// Python repro printers in program/ are for pasting; this one is for reading at a glance).
#pragma once
#include <iosfwd>
#include <string>

#include "program/program.h"

namespace parity::generators {

// "v3 = mul(v1, v2)", then the attributes the op reads, then "[no_grad]" when grad mode is off.
std::string describe(const program::Step& step, int index);
std::string describe(const program::Program& program);

}  // namespace parity::generators

// RapidCheck prints counterexamples through an unqualified showValue found by argument-dependent lookup, so
// the overloads have to live in the namespace of the types they print.
namespace parity::program {
void showValue(const Program& program, std::ostream& os);
void showValue(DType dtype, std::ostream& os);
void showValue(MemoryFormat format, std::ostream& os);
void showValue(OpId op, std::ostream& os);
}  // namespace parity::program
