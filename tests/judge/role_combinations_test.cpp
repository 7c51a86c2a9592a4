// judge/role_combinations: events on one storage keyed by the role of the tensor each happened to. The keys are
// checked directly, then on programs run on LibTorch the way a campaign's child computes them: the issue's
// `y = x*2; v = y[0:1]; v.retain_grad(); y.add_(1); v.sum().backward()` must read differently from the same
// events on the base alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "judge/backend.h"
#include "judge/coverage.h"
#include "judge/role_combinations.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::judge {

using program::DType;
using program::OpId;

namespace {

bool has(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

constexpr int kStorage = 0;

TEST(RoleCombinations, KeysFollowTheOrderAndTheFirstView) {
  RoleCombinations c;
  const int view = 1, other_view = 2, base = 0;
  c.add(kStorage, {TensorEvent::RetainGrad, TensorRole::View, view});
  c.add(kStorage, {TensorEvent::WriteViaView, TensorRole::View, other_view});
  c.add(kStorage, {TensorEvent::Backward, TensorRole::View, view});
  c.add(kStorage, {TensorEvent::Backward, TensorRole::Nonleaf, base});
  EXPECT_TRUE(has(c.pairs(), "retain_grad@view+write_via_view@sibling"));
  EXPECT_TRUE(has(c.pairs(), "write_via_view@view+backward@sibling"));  // the first view a key names is `view`
  EXPECT_TRUE(has(c.triples(), "retain_grad@view+write_via_view@sibling+backward@view"));
  EXPECT_TRUE(has(c.triples(), "retain_grad@view+write_via_view@sibling+backward@nonleaf"));
  // Order matters: nothing happened before the retain_grad.
  EXPECT_FALSE(has(c.pairs(), "write_via_view@view+retain_grad@sibling"));
  EXPECT_FALSE(has(c.triples(), "backward@view+retain_grad@view+write_via_view@sibling"));
  EXPECT_EQ(c.pairs().size(), 6u);  // every two of the four, in order
  EXPECT_EQ(c.triples().size(), 4u);
}

TEST(RoleCombinations, ARepeatedEventAndAnotherStorageAddNothing) {
  RoleCombinations c;
  c.add(kStorage, {TensorEvent::Saved, TensorRole::Leaf, 0});
  c.add(kStorage, {TensorEvent::Saved, TensorRole::Leaf, 0});
  c.add(kStorage + 1, {TensorEvent::WriteOnTensor, TensorRole::Nonleaf, 5});
  EXPECT_TRUE(c.pairs().empty());
  c.add(kStorage, {TensorEvent::WriteViaAlias, TensorRole::Leaf, 3});
  EXPECT_EQ(c.pairs(), std::vector<std::string>{"saved@leaf+write_via_alias@leaf"});
  EXPECT_TRUE(c.triples().empty());
}

// Every goal is a key a case can report, and no key is named twice or names an event in a role it cannot have.
TEST(RoleCombinations, GoalsAreKeysAndKeysAreDistinct) {
  const auto& pairs = role_pairs();
  const auto& triples = role_triples();
  EXPECT_EQ(std::set<std::string>(pairs.begin(), pairs.end()).size(), pairs.size());
  EXPECT_EQ(std::set<std::string>(triples.begin(), triples.end()).size(), triples.size());
  for (const auto& g : role_pair_goals()) EXPECT_TRUE(has(pairs, g)) << g;
  for (const auto& g : role_triple_goals()) EXPECT_TRUE(has(triples, g)) << g;
  EXPECT_FALSE(has(pairs, "write_via_view@leaf+backward@leaf"));
  EXPECT_FALSE(has(pairs, "write_on_tensor@view+backward@leaf"));
  EXPECT_FALSE(has(pairs, "retain_grad@sibling+backward@leaf"));
  EXPECT_EQ(triples.size() % pairs.size(), 0u);  // each pair, then each event that can come later
}

struct Keys {
  std::vector<std::string> pairs, triples;
};

Keys run_on_libtorch(const program::ProgramBuilder& b) {
  auto backend = oracle::make_torch_backend();
  const Trace t = run(*backend, b.program());
  CoverageTags tags = coverage_tags(b.program(), t);
  return {tags.role_pairs, tags.role_triples};
}

// `y = x*2; v = y.t(); v.retain_grad(); WRITE; v.sum().backward()`, WRITE into y itself or through a sibling view.
Keys retain_view_write_backward(bool through_sibling) {
  program::ProgramBuilder b;
  const int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
  const int v = b.with_dims(OpId::Transpose, y, 0, 1);
  const int sibling = b.with_dims(OpId::Transpose, y, 0, 1);
  b.step(OpId::RetainGrad, {v});
  b.scalar(OpId::AddScalar_, through_sibling ? sibling : y, 1);
  b.backward(b.unary(OpId::Sum, v));
  return run_on_libtorch(b);
}

TEST(RoleCombinations, RetainGradOnAViewThenAWriteToItsBase) {
  const Keys k = retain_view_write_backward(false);
  EXPECT_TRUE(has(k.pairs, "retain_grad@view+write_on_tensor@nonleaf"));
  EXPECT_TRUE(has(k.triples, "retain_grad@view+write_on_tensor@nonleaf+backward@view"));
  EXPECT_FALSE(has(k.pairs, "retain_grad@nonleaf+write_on_tensor@nonleaf"));
  const Keys s = retain_view_write_backward(true);
  EXPECT_TRUE(has(s.triples, "retain_grad@view+write_via_view@sibling+backward@view"));
  EXPECT_FALSE(has(s.pairs, "retain_grad@view+write_on_tensor@nonleaf"));
}

TEST(RoleCombinations, TheSameEventsOnTheBaseReadAsTheBase) {
  program::ProgramBuilder b;
  const int y = b.scalar(OpId::MulScalar, b.rand({2, 3}, DType::Float32, true), 2);
  b.step(OpId::RetainGrad, {y});
  b.scalar(OpId::AddScalar_, y, 1);
  b.backward(b.unary(OpId::Sum, y));
  const Keys k = run_on_libtorch(b);
  EXPECT_TRUE(has(k.triples, "retain_grad@nonleaf+write_on_tensor@nonleaf+backward@nonleaf"));
  for (const auto& key : k.pairs) EXPECT_EQ(key.find("view"), std::string::npos) << key;
}

// A copy is a role of its own, whatever autograd says of it: clone(x) written, then a backward through it.
TEST(RoleCombinations, ACopyHasItsRole) {
  program::ProgramBuilder b;
  const int x = b.rand({3}, DType::Float32, true);
  const int c = b.unary(OpId::Clone, x);
  b.scalar(OpId::AddScalar_, c, 1);
  b.backward(b.unary(OpId::Sum, c));
  const Keys k = run_on_libtorch(b);
  EXPECT_TRUE(has(k.pairs, "write_on_tensor@copy+backward@copy"));
}

}  // namespace
}  // namespace parity::judge
