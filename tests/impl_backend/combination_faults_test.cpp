// impl_backend/combination_faults: each planted combination fault holds where its two situations meet and not
// where only one of them is, and misbehaves by one value that any comparison sees (an edge value included).
#include "impl_backend/combination_faults.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "impl/autograd/meta.h"
#include "impl/ops.h"
#include "tests/support/impl_release.h"

namespace parity::impl_backend {
namespace {

using impl::Scalar;
using impl::ScalarType;
using impl::Tensor;
using program::OpId;
using Kind = PlantedFault::Kind;

// impl's ops follow one release; nothing here differs between them.
class PlantedCombinations : public testing::FollowsTorch113 {};

bool holds(Kind kind, OpId op, const std::vector<const Tensor*>& operands, double scalar = 1) {
  program::Step step;
  step.op = op;
  step.attrs.scalar.value = scalar;
  return CombinationFaults::holds({op, kind}, step, operands);
}

TEST_F(PlantedCombinations, AViewWrittenBeforeNotAViewAloneNorAWriteAlone) {
  const Tensor y = impl::ones({4}, ScalarType::Float32);
  const Tensor v = impl::narrow(y, 0, 0, 2);
  EXPECT_FALSE(holds(Kind::ViewWritten, OpId::Sum, {&v}));  // a view, never written
  impl::add_(y, Scalar::of(1));
  EXPECT_FALSE(holds(Kind::ViewWritten, OpId::Sum, {&y}));  // written, no view
  EXPECT_TRUE(holds(Kind::ViewWritten, OpId::Sum, {&v}));   // its base written: one version counter
}

TEST_F(PlantedCombinations, ScalarsFromTheEdgesOnly) {
  const Tensor x = impl::ones({2}, ScalarType::Float32);
  for (double small : {-2.0, 0.0, 0.5, 3.0}) EXPECT_FALSE(holds(Kind::EdgeScalar, OpId::Fill_, {&x}, small)) << small;
  for (double edge : {-0.0, 3.5, -65504.0, std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::quiet_NaN(), 1e-45})
    EXPECT_EQ(holds(Kind::EdgeScalar, OpId::Fill_, {&x}, edge), edge != 1e-45) << edge;  // a denormal is small
}

TEST_F(PlantedCombinations, AnOperandSharingTheDestinationsStorage) {
  const Tensor x = impl::ones({4}, ScalarType::Float32);
  const Tensor head = impl::narrow(x, 0, 0, 2), tail = impl::narrow(x, 0, 2, 2);
  const Tensor other = impl::ones({2}, ScalarType::Float32);
  EXPECT_TRUE(holds(Kind::SharedStorage, OpId::Mul_, {&head, &tail}));  // disjoint memory, one storage
  EXPECT_FALSE(holds(Kind::SharedStorage, OpId::Mul_, {&head, &other}));
}

TEST_F(PlantedCombinations, AZeroDimOperandOfAnotherDtype) {
  const Tensor x = impl::ones({3}, ScalarType::Float32);
  const Tensor half = impl::ones({}, ScalarType::Float16), single = impl::ones({}, ScalarType::Float32);
  const Tensor wide = impl::ones({3}, ScalarType::Float16);
  EXPECT_TRUE(holds(Kind::ZeroDimOther, OpId::Add_, {&x, &half}));
  EXPECT_FALSE(holds(Kind::ZeroDimOther, OpId::Add_, {&x, &single}));  // 0-dim, same dtype
  EXPECT_FALSE(holds(Kind::ZeroDimOther, OpId::Add_, {&x, &wide}));    // another dtype, not 0-dim
}

// x.grad = g; deepcopy(x) and deepcopy(g) under one memo, in either order: the fault breaks the link the memo
// keeps, and nothing else.
TEST_F(PlantedCombinations, ATensorAndItsGradUnderOneMemo) {
  const Tensor x = impl::ones({2}, ScalarType::Float32, /*requires_grad=*/true);
  const Tensor g = impl::full({2}, Scalar::of(3), ScalarType::Float32);
  impl::autograd::set_grad(x, g);
  const std::vector<std::optional<Tensor>> live = {x, g};
  {
    impl::DeepcopyMemo memo;
    EXPECT_EQ(CombinationFaults::memo_link(x, memo, live), CombinationFaults::MemoLink::None);
    const Tensor gc = impl::deepcopy(g, memo);
    ASSERT_EQ(CombinationFaults::memo_link(x, memo, live), CombinationFaults::MemoLink::GradCopiedFirst);
    const Tensor xc = CombinationFaults::unlink(impl::deepcopy(x, memo), CombinationFaults::MemoLink::GradCopiedFirst);
    EXPECT_NE(impl::autograd::grad(xc).storage().key(), gc.storage().key());
    EXPECT_EQ(impl::autograd::grad(xc).to_vector(), gc.to_vector());
  }
  {
    impl::DeepcopyMemo memo;
    const Tensor xc = impl::deepcopy(x, memo);
    ASSERT_EQ(CombinationFaults::memo_link(g, memo, live), CombinationFaults::MemoLink::CopiedAsAGrad);
    const Tensor gc = CombinationFaults::unlink(impl::deepcopy(g, memo), CombinationFaults::MemoLink::CopiedAsAGrad);
    EXPECT_NE(gc.storage().key(), impl::autograd::grad(xc).storage().key());
    EXPECT_EQ(gc.to_vector(), impl::autograd::grad(xc).to_vector());
  }
}

TEST_F(PlantedCombinations, CorruptingShowsEvenOnAnEdgeValue) {
  for (double before : {1.0, 7.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    const Tensor t = impl::full({2}, Scalar::of(before), ScalarType::Float32);
    CombinationFaults::corrupt(t);
    const double after = t.to_vector()[0];
    EXPECT_TRUE(after != before && !std::isnan(after)) << before << " -> " << after;
    if (!std::isnan(before)) {
      EXPECT_EQ(t.to_vector()[1], before);  // one element only
    }
    EXPECT_EQ(t.version(), 0u);  // the arithmetic is wrong, not the version counter
  }
}

// y = x*2; v = y[0:2]; v.retain_grad(); WRITE; v.sum().backward(): v.grad is wrong only after a write.
TEST_F(PlantedCombinations, ARetainedViewsGradientAfterAWrite) {
  for (bool write : {false, true}) {
    const Tensor x = impl::ones({4}, ScalarType::Float32, /*requires_grad=*/true);
    const Tensor y = impl::mul(x, Scalar::of(2));
    const Tensor v = impl::narrow(y, 0, 0, 2);
    CombinationFaults faults;
    impl::autograd::retain_grad(v);
    faults.retained(v);
    if (write) impl::add_(y, Scalar::of(1));
    impl::backward(impl::sum(v));
    faults.after_backward();
    EXPECT_EQ(impl::autograd::grad(v).to_vector(), (write ? std::vector<double>{7, 1} : std::vector<double>{1, 1}));
  }
}

}  // namespace
}  // namespace parity::impl_backend
