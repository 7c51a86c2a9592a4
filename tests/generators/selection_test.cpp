// --ops, --skip-ops, --dtypes and a protocol backend's declared ops: programs use only what is selected, every
// step that depends on a dropped one goes too, and a seed still names one program.
#include <gtest/gtest.h>

#include "generators/program_gen.h"
#include "generators/selection.h"
#include "program/program_builder.h"

namespace parity::generators {

namespace {

using program::DType;
using program::OpId;

Selection only(std::initializer_list<OpId> ops, std::vector<DType> dtypes = {}) {
  Selection s;
  s.ops.assign(program::op_table().size(), false);
  for (OpId op : ops) s.ops[static_cast<std::size_t>(op)] = true;
  s.dtypes = std::move(dtypes);
  return s;
}

TEST(Selection, EverythingByDefault) {
  EXPECT_TRUE(Selection{}.everything());
  EXPECT_FALSE(only({OpId::Rand}).everything());
}

TEST(Selection, GeneratedProgramsUseOnlyTheSelection) {
  GenConfig cfg;
  cfg.selection = only({OpId::Rand, OpId::Zeros, OpId::Add, OpId::Mul, OpId::Sum, OpId::Backward},
                       {DType::Float32, DType::Float64});
  std::size_t steps = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const program::Program p = generate(seed, 50, cfg).value();
    EXPECT_EQ(p, generate(seed, 50, cfg).value());  // a seed names one program
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      const program::Step& s = p.steps[i];
      EXPECT_TRUE(cfg.selection.allows(s)) << program::spec(s.op).name;
      for (int in : s.inputs) EXPECT_LT(in, static_cast<int>(i));
    }
    steps += p.steps.size();
  }
  EXPECT_GT(steps, 300u);  // selecting leaves programs, not empty ones
}

TEST(Selection, DroppedStepsTakeTheirDependents) {
  program::ProgramBuilder b;
  const int x = b.rand({2});
  const int y = b.unary(OpId::Neg, x);
  const int z = b.binary(OpId::Add, x, x);
  b.binary(OpId::Add, y, z);
  const program::Program p = select_steps(b.program(), only({OpId::Rand, OpId::Add}));
  ASSERT_EQ(p.steps.size(), 2u);  // neg goes, and the add that read it
  EXPECT_EQ(p.steps[1].op, OpId::Add);
  EXPECT_EQ(p.steps[1].inputs, (std::vector<int>{0, 0}));
}

}  // namespace

}  // namespace parity::generators
