// impl's random factories (impl/ops/random.cpp): programs never compare their values, so the distributions are
// held here; the layout, the flags and the dtype errors are compared with LibTorch's by every campaign.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <numeric>

#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "tests/support/impl_release.h"

namespace parity::impl {
namespace {

constexpr std::int64_t kSamples = 4096;

class RandomLike : public parity::testing::FollowsTorch113 {};

TEST_F(RandomLike, RandLikeSamplesTheUnitInterval) {
  const Tensor x = zeros({kSamples}, ScalarType::Float64, true);
  const Tensor r = rand_like(x);
  const std::vector<double> v = r.to_vector();
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double s) { return s >= 0 && s < 1; }));
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / kSamples;
  EXPECT_NEAR(mean, 0.5, 0.05);  // 10 standard errors of the mean (1/sqrt(12 * 4096))
  EXPECT_FALSE(autograd::requires_grad(r)) << "a factory's result never requires grad";
  EXPECT_EQ(r.version(), 0u) << "sampled below autograd";
  EXPECT_NE(rand_like(x).to_vector(), v) << "each call draws anew";
}

TEST_F(RandomLike, RandnLikeSamplesTheStandardNormal) {
  const std::vector<double> v = randn_like(zeros({kSamples}, ScalarType::Float64)).to_vector();
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / kSamples;
  double var = 0;
  for (double s : v) var += (s - mean) * (s - mean);
  var /= kSamples - 1;
  EXPECT_NEAR(mean, 0.0, 0.16);  // 10 standard errors of the mean (1/sqrt(4096))
  EXPECT_NEAR(var, 1.0, 0.2);
}

// random_(0, high) in the operand's dtype, whichever it is: every value of [0, high) and nothing else.
TEST_F(RandomLike, RandintLikeSamplesZeroToHighInTheOperandsDtype) {
  for (ScalarType t : {ScalarType::Float32, ScalarType::Int64, ScalarType::Int32, ScalarType::Float16}) {
    const Tensor r = randint_like(zeros({kSamples}, t), 5);
    EXPECT_EQ(r.dtype(), t);
    std::vector<double> v = r.to_vector();
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    EXPECT_EQ(v, (std::vector<double>{0, 1, 2, 3, 4})) << type_name(t);
  }
  EXPECT_EQ(randint_like(zeros({kSamples}, ScalarType::Bool), 1).to_vector(), std::vector<double>(kSamples, 0));
}

// random_'s bounds: from = 0 must be below high, and high - 1 must fit the dtype, even for an empty tensor.
TEST_F(RandomLike, RandintLikeRefusesABoundItsDtypeCannotReach) {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(nothing raised)");
  };
  EXPECT_EQ(message([] { randint_like(zeros({0}, ScalarType::Float32), 0); }),
            "random_ expects 'from' to be less than 'to', but got from=0 >= to=0");
  EXPECT_EQ(message([] { randint_like(zeros({2}, ScalarType::Bool), 3); }), "to - 1 is out of bounds for bool");
  EXPECT_EQ(message([] { randint_like(zeros({2}, ScalarType::Float16), 65506); }),
            "to - 1 is out of bounds for c10::Half");
  EXPECT_EQ(randint_like(zeros({2}, ScalarType::Float16), 65505).dtype(), ScalarType::Float16);
  EXPECT_EQ(message([] { randint_like(zeros({2}, ScalarType::Int32), 2147483649LL); }),
            "to - 1 is out of bounds for int");
}

TEST_F(RandomLike, KeepsTheLayoutAskedFor) {
  const Tensor x = zeros({2, 3, 2, 2}, ScalarType::Float32);
  EXPECT_EQ(rand_like(x, MemoryFormat::ChannelsLast).strides(), (Dims{12, 1, 6, 3}));
  EXPECT_EQ(randn_like(transpose(x, 0, 3)).strides(), transpose(x, 0, 3).strides()) << "preserved";
}

}  // namespace
}  // namespace parity::impl
