// The derivative table (impl/autograd/derivatives.def) and the rules Formula::save holds nodes to: a node saves
// only what its row lists, in the row's order.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "impl/autograd/derivatives.h"
#include "impl/autograd/functions.h"
#include "impl/autograd/meta.h"
#include "impl/ops.h"
#include "impl/torch_version.h"
#include "tests/support/impl_errors.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

using autograd::Derivative;
using autograd::DerivativeRow;
using autograd::NodeKind;
using testing::error_of;

class Derivatives : public parity::testing::FollowsTorch113 {};

autograd::Formula::Fn no_gradient() {
  return [](const Tensor&, const autograd::TensorList&, const autograd::Formula&) { return autograd::TensorList{}; };
}

TEST(DerivativeTable, NamesAreUniqueAndNamedAsPyTorchNamesNodes) {
  const std::regex generated("[A-Z][A-Za-z]*Backward[0-9]+");
  std::set<std::string_view> names;
  for (const DerivativeRow& r : autograd::derivatives()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    if (r.kind == NodeKind::Generated)
      EXPECT_TRUE(std::regex_match(std::string(r.name), generated)) << r.name;
    else
      EXPECT_EQ(r.name.rfind("torch::autograd::", 0), 0u) << r.name;
    EXPECT_FALSE(r.ops.empty()) << r.name;
    EXPECT_FALSE(r.formula.empty()) << r.name;
    std::set<std::string_view> saved(r.saved.begin(), r.saved.end());
    EXPECT_EQ(saved.size(), r.saved.size()) << r.name << " lists a saved tensor twice";
  }
}

// The file says its rows are in alphabetical order, so that a reader finds a node as in derivatives.yaml's index.
TEST(DerivativeTable, RowsAreInTheOrderOfTheirNodes) {
  const auto rows = autograd::derivatives();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(rows[i].id), i);
    auto bare = [](std::string_view n) { return n.substr(n.rfind(':') == std::string_view::npos ? 0 : n.rfind(':') + 1); };
    if (i > 0) {
      EXPECT_LT(bare(rows[i - 1].name), bare(rows[i].name));
    }
  }
}

TEST_F(Derivatives, ANodeIsNamedByItsRow) {
  const Tensor a = requires_grad_(from_values({1, 2}, ScalarType::Float32), true);
  const Tensor b = requires_grad_(from_values({3, 4}, ScalarType::Float32), true);
  EXPECT_EQ(autograd::grad_fn(mul(a, b))->name(), autograd::derivative(Derivative::MulBackward0).name);
  EXPECT_EQ(autograd::grad_fn(exp(a))->name(), "ExpBackward0");
}

TEST_F(Derivatives, SavingWhatTheRowDoesNotListIsAnInternalAssertion) {
  autograd::Formula node(Derivative::ExpBackward0, no_gradient());
  const Tensor t = from_values({1}, ScalarType::Float32);
  const auto [kind, message] = error_of([&] { node.save("self", t); });
  EXPECT_EQ(kind, ErrorKind::InternalAssert);
  EXPECT_NE(message.find("ExpBackward0 saves no tensor named \"self\""), std::string::npos) << message;
}

TEST_F(Derivatives, SavingOutOfTheRowsOrderIsAnInternalAssertion) {
  const Tensor t = from_values({1}, ScalarType::Float32);
  autograd::Formula in_order(Derivative::MulBackward0, no_gradient());
  in_order.save("self", t);
  in_order.save("other", t);
  autograd::Formula skipping(Derivative::MulBackward0, no_gradient());
  skipping.save("other", t);  // self's gradient alone needs only other
  autograd::Formula reversed(Derivative::MulBackward0, no_gradient());
  reversed.save("other", t);
  const auto [kind, message] = error_of([&] { reversed.save("self", t); });
  EXPECT_EQ(kind, ErrorKind::InternalAssert);
  EXPECT_NE(message.find("out of the order"), std::string::npos) << message;
}

TEST(DerivativeTable, SavedPositionFollowsTheRow) {
  EXPECT_EQ(autograd::saved_position(Derivative::MvBackward0, "vec"), 0u);
  EXPECT_EQ(autograd::saved_position(Derivative::MvBackward0, "self"), 1u);
  EXPECT_EQ(error_of([] { autograd::saved_position(Derivative::MvBackward0, "mat2"); }).first, ErrorKind::InternalAssert);
}

// 1.13's MeanBackward1 divides an all-dims mean by the numel of its saved self as it is at the backward, and any
// other mean by the forward's reduced sizes; 2.x saves only the sizes (VersionGate::MeanDimSavesSizes).
TEST_F(Derivatives, AnAllDimsMeanOfATensorGivenOtherDataDividesByItsNewNumelIn113) {
  auto x_grad_after = [](const Dims& dims) {
    Tensor x = requires_grad_(from_values({1, 2, 3, 4, 5, 6}, ScalarType::Float32), true);
    Tensor y = mul(view(x, {2, 3}), Scalar::of(1));
    Tensor z = sum(mean(y, dims, false));
    set_data(y, zeros({5, 3}, ScalarType::Float32));
    backward(z);
    return autograd::grad(x).to_vector()[0];
  };
  EXPECT_FLOAT_EQ(x_grad_after({}), 1.0f / 15);
  EXPECT_FLOAT_EQ(x_grad_after({0}), 1.0f / 2);
  TargetTorchVersionGuard release(TorchVersion{2, 15});
  EXPECT_FLOAT_EQ(x_grad_after({}), 1.0f / 6);
}

}  // namespace
}  // namespace parity::impl
