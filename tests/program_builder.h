// Building small programs by hand in unit tests: every helper appends one step and returns the id of the value
// it makes. Attributes not given keep Attrs' defaults.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "program/program.h"

namespace parity::test_support {

inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t s = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

class ProgramBuilder {
 public:
  using OpId = program::OpId;
  using Attrs = program::Attrs;

  int step(OpId op, std::vector<int> inputs, Attrs attrs = {}, bool grad_enabled = true) {
    p_.steps.push_back(program::Step{op, std::move(inputs), std::move(attrs), grad_enabled});
    return static_cast<int>(p_.steps.size()) - 1;
  }
  // A fresh tensor of seeded values, contiguous or with the given strides.
  int rand(std::vector<std::int64_t> sizes, program::DType dtype = program::DType::Float32, bool requires_grad = false,
           std::uint64_t seed = 1) {
    auto strides = contiguous_strides(sizes);
    return rand_strided(std::move(sizes), std::move(strides), 0, dtype, requires_grad, seed);
  }
  int rand_strided(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                   program::DType dtype = program::DType::Float32, bool requires_grad = false, std::uint64_t seed = 1) {
    Attrs a;
    a.sizes = std::move(sizes);
    a.strides = std::move(strides);
    a.offset = offset;
    a.dtype = dtype;
    a.requires_grad = requires_grad;
    a.seed = seed;
    return step(OpId::Rand, {}, a);
  }
  int scalar_op(OpId op, int x, program::Scalar s, bool grad_enabled = true) {
    Attrs a;
    a.scalar = s;
    return step(op, {x}, a, grad_enabled);
  }
  int backward(int x, bool retain_graph = false) {
    Attrs a;
    a.retain_graph = retain_graph;
    return step(OpId::Backward, {x}, a);
  }
  int with_format(OpId op, int x, program::MemoryFormat mf) {
    Attrs a;
    a.memory_format = mf;
    return step(op, {x}, a);
  }
  int with_sizes(OpId op, int x, std::vector<std::int64_t> sizes) {
    Attrs a;
    a.sizes = std::move(sizes);
    return step(op, {x}, a);
  }
  int with_dims(OpId op, int x, std::int64_t dim, std::int64_t dim1 = 0) {
    Attrs a;
    a.dim = dim;
    a.dim1 = dim1;
    return step(op, {x}, a);
  }
  const program::Program& program() const { return p_; }

 protected:
  program::Program p_;
};

}  // namespace parity::test_support
