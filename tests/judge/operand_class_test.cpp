// judge/operand_class: the op × operand situation keys, one per pair an op can meet, named and indexed alike.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "judge/operand_class.h"

namespace parity::judge {
namespace {

using program::OpId;

TEST(OperandClass, KeysAreThePairsAnOpCanMeetNamedOnce) {
  const auto& keys = op_operand_keys();
  const auto& names = op_operand_names();
  ASSERT_EQ(keys.size(), names.size());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  std::size_t expected = 0;
  for (const program::OpSpec& op : program::op_table())
    for (std::size_t c = 0; c < kOperandClassCount; ++c) expected += can_meet(op, static_cast<OperandClass>(c));
  EXPECT_EQ(keys.size(), expected);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_TRUE(can_meet(program::spec(keys[i].op), keys[i].operand_class)) << names[i];
    EXPECT_EQ(op_operand_index(names[i]), i);
    EXPECT_EQ(op_operand_index(keys[i]), i);
    EXPECT_EQ(names[i], std::string(program::spec(keys[i].op).name) + ":" +
                            std::string(to_string(keys[i].operand_class)));
  }
}

TEST(OperandClass, EachSituationOnlyWhereTheOpCanBeInIt) {
  const auto has = [](const char* name) { return op_operand_index(name).has_value(); };
  EXPECT_TRUE(has("mul_:shared_storage"));
  EXPECT_TRUE(has("exp_out:shared_storage")) << "an out= form writes its out";
  EXPECT_FALSE(has("mul:shared_storage")) << "writes no operand";
  EXPECT_FALSE(has("neg:zero_dim_other")) << "one operand";
  EXPECT_TRUE(has("fill_:edge_scalar"));
  EXPECT_FALSE(has("neg:edge_scalar")) << "reads no scalar";
  EXPECT_TRUE(has("deepcopy:memo_grad"));
  EXPECT_FALSE(has("clone:memo_grad"));
  EXPECT_FALSE(has("rand:view_written")) << "no operand";
  for (std::size_t c = 0; c < kOperandClassCount; ++c)
    EXPECT_FALSE(can_meet(program::spec(OpId::ToDevice), static_cast<OperandClass>(c)))
        << "a device-only op is no key of a CPU campaign";
  EXPECT_FALSE(op_operand_index("mul_:no_such_situation").has_value());
}

}  // namespace
}  // namespace parity::judge
