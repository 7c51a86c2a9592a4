// Building programs by hand (unit tests, properties, seed claims): each helper appends one step and returns its
// index, which is the id of the value it makes (for backward: only the step's index). Attributes not given keep
// Attrs' defaults.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "program/program.h"

namespace parity::program {

class ProgramBuilder {
 public:
  int step(OpId op, std::vector<int> inputs, Attrs attrs = {}, bool grad_enabled = true) {
    p_.steps.push_back(Step{op, std::move(inputs), std::move(attrs), grad_enabled});
    return static_cast<int>(p_.steps.size()) - 1;
  }

  // ---- fresh tensors ----

  // Seeded values (program/content.h) in a fresh contiguous storage.
  int rand(std::vector<std::int64_t> sizes, DType dtype = DType::Float32, bool requires_grad = false,
           std::uint64_t seed = 1) {
    auto strides = contiguous_strides(sizes);
    return rand_strided(std::move(sizes), std::move(strides), 0, dtype, requires_grad, seed);
  }
  // Seeded values in a fresh storage, laid out with these strides from an absolute offset.
  int rand_strided(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::int64_t offset,
                   DType dtype = DType::Float32, bool requires_grad = false, std::uint64_t seed = 1) {
    Attrs a;
    a.sizes = std::move(sizes);
    a.strides = std::move(strides);
    a.offset = offset;
    a.dtype = dtype;
    a.requires_grad = requires_grad;
    a.seed = seed;
    return step(OpId::Rand, {}, std::move(a));
  }
  // torch.full(sizes, value, dtype, requires_grad): torch.tensor([2.0], requires_grad=True) is full({1}, 2, rg).
  int full(std::vector<std::int64_t> sizes, double value, bool requires_grad = false, DType dtype = DType::Float32) {
    Attrs a;
    a.sizes = std::move(sizes);
    a.scalar = {is_floating(dtype) ? Scalar::Kind::Float : Scalar::Kind::Int, value};
    a.dtype = dtype;
    a.requires_grad = requires_grad;
    return step(OpId::Full, {}, std::move(a));
  }
  int ones(std::vector<std::int64_t> sizes, bool requires_grad = false) {
    Attrs a;
    a.sizes = std::move(sizes);
    a.requires_grad = requires_grad;
    return step(OpId::Ones, {}, std::move(a));
  }
  int arange(std::int64_t end, DType dtype) {
    Attrs a;
    a.end = end;
    a.dtype = dtype;
    return step(OpId::Arange, {}, std::move(a));
  }

  // ---- ops on earlier values ----

  int unary(OpId op, int x, bool grad_enabled = true) { return step(op, {x}, {}, grad_enabled); }
  int binary(OpId op, int x, int y) { return step(op, {x, y}); }
  int scalar_op(OpId op, int x, Scalar s, bool grad_enabled = true) {
    Attrs a;
    a.scalar = s;
    return step(op, {x}, std::move(a), grad_enabled);
  }
  // A Python float literal operand: x.mul(2.0).
  int scalar(OpId op, int x, double value, bool grad_enabled = true) {
    return scalar_op(op, x, {Scalar::Kind::Float, value}, grad_enabled);
  }
  // A Python int literal operand: x.add(1).
  int int_scalar(OpId op, int x, std::int64_t value, bool grad_enabled = true) {
    return scalar_op(op, x, {Scalar::Kind::Int, static_cast<double>(value)}, grad_enabled);
  }
  int with_format(OpId op, int x, MemoryFormat mf) {
    Attrs a;
    a.memory_format = mf;
    return step(op, {x}, std::move(a));
  }
  int with_sizes(OpId op, int x, std::vector<std::int64_t> sizes) {
    Attrs a;
    a.sizes = std::move(sizes);
    return step(op, {x}, std::move(a));
  }
  int with_dims(OpId op, int x, std::int64_t dim, std::int64_t dim1 = 0, bool grad_enabled = true) {
    Attrs a;
    a.dim = dim;
    a.dim1 = dim1;
    return step(op, {x}, std::move(a), grad_enabled);
  }
  int clone(int x, MemoryFormat mf = MemoryFormat::Preserve) { return with_format(OpId::Clone, x, mf); }
  int select(int x, std::int64_t dim, std::int64_t index) {
    Attrs a;
    a.dim = dim;
    a.index = index;
    return step(OpId::Select, {x}, std::move(a));
  }
  int requires_grad_(int x, bool requires_grad = true) {
    Attrs a;
    a.requires_grad = requires_grad;
    return step(OpId::RequiresGrad_, {x}, std::move(a));
  }
  int deepcopy(int x, std::int64_t memo = 0) {
    Attrs a;
    a.memo = memo;
    return step(OpId::Deepcopy, {x}, std::move(a));
  }
  int backward(int x, bool retain_graph = false) {
    Attrs a;
    a.retain_graph = retain_graph;
    return step(OpId::Backward, {x}, std::move(a));
  }

  const Program& program() const { return p_; }

 protected:
  Program p_;
};

}  // namespace parity::program
