// impl's version-gated behaviours (impl/version_gates.def): each test runs the same calls following 1.13 and
// following 2.15, whatever LibTorch this build is judged against, and checks what each release does (as
// LibTorch 1.13.1 and 2.15.0 were seen to do).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/torch_version.h"
#include "impl/version_gate.h"
#include "tests/support/impl_errors.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

using autograd::grad;
using autograd::grad_fn;
using testing::error_of;

// The release these suites expect LibTorch's behaviour of (tests/support/impl_release.h).
class VersionGates : public parity::testing::FollowsTorch113 {};


constexpr TorchVersion k113{1, 13}, k215{2, 15};

Tensor values(const std::vector<double>& v, ScalarType t = ScalarType::Float32) { return from_values(v, t); }
Tensor leaf(const std::vector<double>& v, ScalarType t = ScalarType::Float32) {
  return requires_grad_(values(v, t), true);
}

TEST(TorchVersion, ParsesReleaseStringsAndOrders) {
  EXPECT_EQ(TorchVersion::parse("2.15.0+cu132"), k215);
  EXPECT_EQ(TorchVersion::parse("1.13.1"), k113);
  EXPECT_EQ(TorchVersion::parse("2.15"), k215);
  EXPECT_EQ(TorchVersion::parse("2.1.0a0"), (TorchVersion{2, 1}));
  EXPECT_FALSE(TorchVersion::parse("2").has_value());
  EXPECT_FALSE(TorchVersion::parse("v2.1").has_value());
  EXPECT_FALSE(TorchVersion::parse("2.x").has_value());
  EXPECT_FALSE(TorchVersion::parse("2.1~").has_value());
  EXPECT_LT(k113, (TorchVersion{2, 0}));
  EXPECT_LT((TorchVersion{2, 2}), (TorchVersion{2, 15}));
  EXPECT_EQ(k215.str(), "2.15");
}

TEST(TorchVersion, GuardRestoresThePreviousTarget) {
  const std::optional<TorchVersion> before = target_torch_version();
  {
    TargetTorchVersionGuard g(k215);
    EXPECT_EQ(target_torch_version(), k215);
    EXPECT_TRUE(follows(VersionGate::ReshapeContiguousIsView));
    {
      TargetTorchVersionGuard inner(k113);
      EXPECT_FALSE(follows(VersionGate::ReshapeContiguousIsView));
    }
    EXPECT_EQ(target_torch_version(), k215);
  }
  EXPECT_EQ(target_torch_version(), before);
}

// No release is followed unless one is chosen: behaviour that differs by release is then an internal assertion,
// never one release's behaviour by default, for a gate asked directly and for an op that asks one.
TEST(TorchVersion, NothingIsFollowedUnlessChosen) {
  ASSERT_EQ(target_torch_version(), std::nullopt) << "this test runs outside any TargetTorchVersionGuard";
  try {
    (void)follows(VersionGate::ReshapeContiguousIsView);
    ADD_FAILURE() << "follows() with no release chosen must raise";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InternalAssert);
    EXPECT_NE(std::string(e.what()).find("TargetTorchVersionGuard"), std::string::npos) << e.what();
  }
  Tensor x;
  {
    TargetTorchVersionGuard g(k113);
    x = zeros({2, 3}, ScalarType::Float32);
  }
  try {
    (void)reshape(x, {3, 2});
    ADD_FAILURE() << "reshape, which differs by release, ran with no release chosen";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InternalAssert) << e.what();
  }
}

// Every row says what changed, both behaviours and where, and comes after the oldest release impl models.
TEST_F(VersionGates, EveryRowIsComplete) {
  std::set<std::string_view> names;
  ASSERT_FALSE(version_gates().empty());
  for (const VersionGateRow& r : version_gates()) {
    SCOPED_TRACE(std::string(r.name));
    EXPECT_TRUE(names.insert(r.name).second) << "duplicate gate";
    EXPECT_EQ(&version_gate(r.gate), &r);
    EXPECT_GT(r.since, kOldestTorchVersion);
    for (std::string_view field : {r.what, r.before, r.after, r.where}) EXPECT_FALSE(field.empty());
  }
}

TEST_F(VersionGates, ContiguousReshapeIsAViewFrom2) {
  Tensor x = clone(view(leaf({1, 2, 3, 4, 5, 6}), {2, 3}));
  Tensor t = transpose(x, 0, 1);
  {
    TargetTorchVersionGuard g(k113);
    EXPECT_EQ(grad_fn(reshape(x, {3, 2}))->name(), "ReshapeAliasBackward0");
    EXPECT_EQ(grad_fn(reshape(unsqueeze(t, 0), {3, 2}))->name(), "ReshapeAliasBackward0");
  }
  {
    TargetTorchVersionGuard g(k215);
    EXPECT_EQ(grad_fn(reshape(x, {3, 2}))->name(), "ViewBackward0");
    EXPECT_EQ(grad_fn(reshape(unsqueeze(t, 0), {3, 2}))->name(), "ReshapeAliasBackward0");
  }
}

TEST_F(VersionGates, VersionErrorNamesTheForwardOpFrom2) {
  auto message = [](TorchVersion v) {
    TargetTorchVersionGuard g(v);
    Tensor x = leaf({1, 2});
    Tensor y = exp(x);
    Tensor z = div(y, Scalar::of(2));
    add_(y, Scalar::of(1));
    return error_of([&] { backward(sum(mul(z, z))); }).second + " | " +
           error_of([&] { backward(sum(z)); }).second;
  };
  const std::string old = message(k113), now = message(k215);
  EXPECT_NE(old.find("which is output 0 of ExpBackward0, is at version 1; expected version 0 instead. Hint: enable "
                     "anomaly detection to find the operation that failed to compute its gradient, with "
                     "torch.autograd.set_detect_anomaly(True)."),
            std::string::npos)
      << old;
  EXPECT_NE(now.find("which is output 0 of Exp, is at version 1; expected version 0 instead. Hint: enable anomaly "
                     "detection to find the operation that failed to compute its gradient, with "
                     "torch.autograd.set_detect_anomaly(True, check_nan=False)."),
            std::string::npos)
      << now;
}

TEST_F(VersionGates, ClampGradientExcludesTheBoundsFrom2) {
  auto gradient = [](TorchVersion v) {
    TargetTorchVersionGuard g(v);
    Tensor x = leaf({-1, 0, 3, 4});
    backward(sum(clamp(x, Scalar::of_int(-1), Scalar::of(3.0))));
    return grad(x).to_vector();
  };
  EXPECT_EQ(gradient(k113), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(gradient(k215), (std::vector<double>{0, 1, 0, 0}));
}

// The gradient of mul and div by a Scalar: 1.13 multiplies by at::scalar_to_tensor(other), so a recorded gradient's
// grad_fn is MulBackward0 or DivBackward0; 2.x by the Scalar itself (MulBackward1, DivBackward1). The values agree,
// recorded or not, in the grad's dtype. (Recorded: create_graph and an incoming gradient that requires grad.)
TEST_F(VersionGates, ScalarOpsDeriveWithTheScalarFrom2) {
  for (TorchVersion v : {k113, k215}) {
    TargetTorchVersionGuard g(v);
    SCOPED_TRACE(v.str());
    const bool old = v == k113;
    for (bool create_graph : {false, true}) {
      for (ScalarType t : {ScalarType::Float32, ScalarType::Float64, ScalarType::Float16}) {
        Tensor x = leaf({1, 2}, t), v = leaf({1, 1}, t);
        Tensor gm = autograd_grad(mul(x, Scalar::of(0.1)), x, v, false, false, create_graph);
        Tensor gd = autograd_grad(div(x, Scalar::of_int(3)), x, v, false, false, create_graph);
        EXPECT_EQ(gm.dtype(), t);
        EXPECT_EQ(gm.to_vector(), to(full({2}, Scalar::of(0.1), ScalarType::Float64), t).to_vector());
        EXPECT_EQ(gd.to_vector(), div(ones({2}, t), Scalar::of_int(3)).to_vector());
        const auto name = [](const Tensor& r) { return grad_fn(r) ? grad_fn(r)->name() : std::string("none"); };
        EXPECT_EQ(name(gm), !create_graph ? "none" : old ? "MulBackward0" : "MulBackward1");
        EXPECT_EQ(name(gd), !create_graph ? "none" : old ? "DivBackward0" : "DivBackward1");
      }
    }
  }
}

// x * x sends two gradients to x's accumulator: 2.x adds the second into the first in place.
TEST_F(VersionGates, TheEngineSumsGradientsInPlaceFrom2) {
  auto version = [](TorchVersion v) {
    TargetTorchVersionGuard g(v);
    Tensor x = leaf({1, 2});
    backward(sum(mul(x, x)));
    EXPECT_EQ(grad(x).to_vector(), (std::vector<double>{2, 4}));
    return grad(x).version();
  };
  EXPECT_EQ(version(k113), 0u);
  EXPECT_EQ(version(k215), 1u);
}

// autograd.grad reaching a non-leaf that retains its grad: 2.x runs its retain_grad hook.
TEST_F(VersionGates, CapturedNonLeafRunsRetainGradFrom2) {
  auto defined = [](TorchVersion v) {
    TargetTorchVersionGuard g(v);
    Tensor x = leaf({1, 2});
    Tensor y = mul(x, Scalar::of(3));
    retain_grad(y);
    autograd_grad(sum(y), y, /*retain_graph=*/false);
    return grad(y).defined();
  };
  EXPECT_FALSE(defined(k113));
  EXPECT_TRUE(defined(k215));
}

TEST_F(VersionGates, HalfKernelsAndProductsFrom2) {
  const ScalarType H = ScalarType::Float16;
  {
    TargetTorchVersionGuard g(k113);
    EXPECT_EQ(error_of([&] { exp(values({1}, H)); }).second, "\"exp_vml_cpu\" not implemented for 'Half'");
  }
  TargetTorchVersionGuard g(k215);
  EXPECT_EQ(exp(values({0}, H)).to_vector(), (std::vector<double>{1}));
  // 2049 is not a float16: a float16 accumulator would round 2048 + 1 to 2048 at every step; 2.x sums in float.
  Tensor a = values({2048, 1, 1}, H), b = values({1, 1, 1}, H);
  EXPECT_EQ(matmul(a, b).to_vector(), (std::vector<double>{2050}));
  EXPECT_EQ(mm(view(a, {1, 3}), view(b, {3, 1})).to_vector(), (std::vector<double>{2050}));
}

TEST_F(VersionGates, IndexTakesInt32From2) {
  Tensor x = values({10, 20, 30});
  Tensor i = values({2, 0}, ScalarType::Int32);
  {
    TargetTorchVersionGuard g(k113);
    EXPECT_EQ(error_of([&] { index(x, i); }).second, "tensors used as indices must be long, byte or bool tensors");
  }
  TargetTorchVersionGuard g(k215);
  EXPECT_EQ(index(x, i).to_vector(), (std::vector<double>{30, 10}));
  EXPECT_EQ(error_of([&] { index(x, values({0})); }).second,
            "tensors used as indices must be long, int, byte or bool tensors");
}

// A vector times a batch whose transposed matrices do not fold into rows as a view: 1.13 always folds (one mv),
// 2.x runs a bmm (the vector does not require grad, which would make it fold).
TEST_F(VersionGates, MatmulFoldsOnlyWhenTheBatchViewsAsRowsFrom2) {
  Tensor v = values({1, 2, 3});
  Tensor batch = view(leaf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), {2, 3, 2});
  auto product = [&](TorchVersion ver) {
    TargetTorchVersionGuard g(ver);
    Tensor r = matmul(v, batch);
    EXPECT_EQ(r.to_vector(), (std::vector<double>{22, 28, 58, 64}));
    return grad_fn(r)->next_edges().front().fn->name();
  };
  EXPECT_EQ(product(k113), "MvBackward0");
  EXPECT_EQ(product(k215), "BmmBackward0");
}

// A base that retains its grad, written through a view of it by an operand that requires grad: 2.x moves the
// base's hook to CopySlices only when the view required grad before the write. A base detached in place after
// retain_grad() makes a view that did not, so its hook stays behind and no .grad is set (found by the soak
// against 2.15).
TEST_F(VersionGates, ABaseDetachedInPlaceKeepsItsHookThroughAWriteViaAView) {
  auto retained = [](TorchVersion v, bool detached) {
    TargetTorchVersionGuard g(v);
    Tensor y = mul(leaf({1, 2}), Scalar::of(3));
    retain_grad(y);
    if (detached) detach_(y);
    mul_(view(y, {2, 1}), leaf({5}));
    backward(sum(y));
    return grad(y).defined() ? grad(y).to_vector() : std::vector<double>{};
  };
  EXPECT_EQ(retained(k113, false), (std::vector<double>{5, 5}));  // the hook's node, below the write
  EXPECT_EQ(retained(k215, false), (std::vector<double>{1, 1}));  // CopySlices, the write's own gradient
  EXPECT_EQ(retained(k113, true), std::vector<double>{});
  EXPECT_EQ(retained(k215, true), std::vector<double>{});
}

// The soak's 2.15 findings: 2.x's matmul transposes a right operand of more dims than the left (should_fold's
// tensor2.mT()) before comparing any size, so a stale view there raises first; 1.13 reads the left first, and
// only after the batch sizes were found to disagree.
TEST_F(VersionGates, MatmulReadsALargerRightOperandFirstFrom2) {
  const std::string no_grad_view =
      "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
      "with grad mode enabled.";
  auto raised = [](TorchVersion ver, bool chunked) {
    TargetTorchVersionGuard g(ver);
    Tensor base = clone(leaf({-1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
    Tensor left, right;
    if (chunked) {  // two views of one multi-output view: left (3, 3, 1), right (3, 3, 1, 1)
      base = clone(leaf({-1, 2, 3, 4, 5, 6, 7, 8, 9}));
      left = chunk(view(base, {3, 3, 1}), 4, -1)[0];
      right = unfold(left, 2, 1, 3);
    } else {  // batches (3) and (2, 2) that cannot broadcast
      left = permute(view(base, {2, 2, 3}), {2, 0, 1});
      autograd::NoGradGuard no_grad;
      right = unsqueeze(view(base, {2, 2, 3}), 2);
    }
    zero_(base);
    return error_of([&] { matmul(left, right); }).second;
  };
  EXPECT_EQ(raised(k113, false), "The size of tensor a (3) must match the size of tensor b (2) at non-singleton "
                                 "dimension 1");
  EXPECT_EQ(raised(k215, false).substr(0, no_grad_view.size()), no_grad_view);
  const std::string multi_output =
      " is a view and its base or another view of its base has been modified inplace. This view is the output of a "
      "function that returns multiple views. Such functions do not allow the output views to be modified inplace. "
      "You should replace the inplace operation by an out-of-place one.";
  EXPECT_EQ(raised(k113, true), "Output 0 of SplitBackward0" + multi_output);
  EXPECT_EQ(raised(k215, true), "Output 0 of Unfold" + multi_output);
}

}  // namespace
}  // namespace parity::impl
