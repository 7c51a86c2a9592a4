// The generator's version (generators/program_gen.h): the code's own number and a fingerprint of what the
// generator reads from the op table.
#include <cstdint>

#include "generators/program_gen.h"
#include "program/op_table.h"

namespace parity::generators {

namespace {

// The step-effect traits as the bits the version has always mixed (they were one bitmask once), so that the same
// table keeps the same version.
std::uint64_t effect_bits(const program::OpSpec& op) {
  return std::uint64_t{op.mutates} | std::uint64_t{op.values_undefined} << 1 | std::uint64_t{op.no_value} << 2 |
         std::uint64_t{op.runs_backward} << 3 | std::uint64_t{op.writes_grad} << 4;
}

}  // namespace

int generator_version() {
  static const int version = [] {
    std::uint64_t h = 14695981039346656037ull;  // FNV-1a
    auto mix = [&h](std::uint64_t x) { h = (h ^ x) * 1099511628211ull; };
    for (const program::OpSpec& op : program::op_table()) {
      for (char c : op.name) mix(static_cast<unsigned char>(c));
      for (std::uint64_t x : {std::uint64_t{static_cast<std::uint8_t>(op.kind)}, std::uint64_t(op.arity),
                              std::uint64_t(op.weight), effect_bits(op),
                              op.inplace_of ? std::uint64_t{static_cast<std::uint8_t>(*op.inplace_of)} + 1 : 0,
                              std::uint64_t{static_cast<std::uint8_t>(op.result)},
                              std::uint64_t{static_cast<std::uint8_t>(op.saves)},
                              std::uint64_t{static_cast<std::uint8_t>(op.writes)}, std::uint64_t{op.rounds},
                              std::uint64_t{op.amplifies_rounding}, std::uint64_t{op.leaf_result},
                              std::uint64_t{op.multi_output}, std::uint64_t{op.double_backward},
                              std::uint64_t{op.operand0.dtypes},
                              std::uint64_t(op.operand0.min_rank), std::uint64_t(op.operand0.max_rank),
                              std::uint64_t{op.operand0.some_dim_nonempty}, std::uint64_t{op.operand0.requires_grad},
                              std::uint64_t{op.operand0.single_element}, std::uint64_t{op.operand0.leaf},
                              std::uint64_t{op.refuses != nullptr}, std::uint64_t{op.overlaps != nullptr},
                              std::uint64_t{op.is_noop != nullptr}, std::uint64_t{op.device_only}})
        mix(x);
      for (program::Attr a : op.attrs) mix(static_cast<std::uint8_t>(a));
    }
    return kGeneratorCodeVersion * 100000 + static_cast<int>(h % 100000);
  }();
  return version;
}

}  // namespace parity::generators
