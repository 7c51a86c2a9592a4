// What impl's tests of pointwise ops, indexing and products share: small tensors of given values, the graph below
// a tensor in words, and checks of values and errors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "tests/support/impl_errors.h"

namespace parity::impl::testing {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

inline Tensor values(const std::vector<double>& v, ScalarType t = ScalarType::Float32) { return from_values(v, t); }
inline Tensor leaf(const std::vector<double>& v) { return requires_grad_(values(v), true); }

// A fresh contiguous float tensor holding 1, 2, 3, ... (scaled down), optionally a leaf requiring grad.
inline Tensor seq(const Dims& sizes, bool requires_grad = false) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7) * 0.5 - 1;
  Tensor t = clone(view(values(v), sizes));
  return requires_grad ? requires_grad_(t, true) : t;
}

inline ErrorKind kind_of(const std::function<void()>& f) { return testing::error_of(f).first; }
inline void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& message) {
  auto [k, m] = testing::error_of(f);
  EXPECT_EQ(k, kind) << m;
  EXPECT_EQ(m, message);
}

inline Tensor bools(const Dims& sizes) { return full(sizes, Scalar::of(1), ScalarType::Bool); }

// The graph below t as name(next, ...), "Acc" for a leaf's accumulator and "_" for an input without grad.
inline std::string graph(const Rc<autograd::Node>& n) {
  if (!n) return "-";
  if (n->name() == "torch::autograd::AccumulateGrad") return "Acc";
  std::string inner;
  for (const auto& e : n->next_edges()) {
    if (!inner.empty()) inner += ",";
    inner += e.valid() ? graph(e.fn) : "_";
  }
  return n->name() + "(" + inner + ")";
}
inline std::string graph(const Tensor& t) { return graph(autograd::grad_fn(t)); }

inline void expect_values(const Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    else EXPECT_NEAR(got[i], expected[i], tol) << "at " << i;
  }
}

}  // namespace parity::impl::testing
