// impl's operator API, with PyTorch's semantics: every function records autograd history (when grad mode is
// on and an input requires grad), in-place functions bump the version counter, views share storage.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <vector>

#include "impl/tensor.h"

namespace parity::impl {

// A scalar as written by the user: its kind takes part in type promotion like a Python number.
struct Scalar {
  enum class Kind : std::uint8_t { Int, Float, Bool };
  Kind kind = Kind::Float;
  double value = 0;
  static Scalar of(double v) { return {Kind::Float, v}; }
  static Scalar of_int(std::int64_t v) { return {Kind::Int, static_cast<double>(v)}; }
};

// factories
Tensor empty(const Dims& sizes, ScalarType dtype, MemoryFormat format = MemoryFormat::Contiguous, Device device = {});
Tensor empty_strided(const Dims& sizes, const Dims& strides, ScalarType dtype, Device device = {});
Tensor full(const Dims& sizes, Scalar value, ScalarType dtype, bool requires_grad = false, Device device = {});
Tensor zeros(const Dims& sizes, ScalarType dtype, bool requires_grad = false, Device device = {});
Tensor ones(const Dims& sizes, ScalarType dtype, bool requires_grad = false, Device device = {});
Tensor arange(std::int64_t end, ScalarType dtype, Device device = {});
Tensor from_values(const std::vector<double>& values, ScalarType dtype);  // 1-d, contiguous
Tensor from_values(const std::vector<double>& values, const Dims& sizes, ScalarType dtype);  // contiguous
// Python's torch.tensor of a literal list, `elements` flat and row-major in `sizes`: each stored without a write
// (version 0), as Python's store_scalar converts it.
Tensor literal_tensor(const std::vector<Scalar>& elements, const Dims& sizes, ScalarType dtype,
                      bool requires_grad = false, Device device = {});
Tensor empty_like(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve);
Tensor zeros_like(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve);
Tensor ones_like(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve);
Tensor full_like(const Tensor& x, Scalar value, MemoryFormat format = MemoryFormat::Preserve);
// Samples of U[0, 1) and N(0, 1) in a tensor like x, made on `device` (x's when none).
Tensor rand_like(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve, std::optional<Device> device = {});
Tensor randn_like(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve, std::optional<Device> device = {});
// Integers drawn uniformly from [0, high), in x's dtype (random_(0, high) of an empty_like).
Tensor randint_like(const Tensor& x, std::int64_t high, MemoryFormat format = MemoryFormat::Preserve,
                    std::optional<Device> device = {});

// copies and aliases
Tensor clone(const Tensor& x, MemoryFormat format = MemoryFormat::Preserve);
Tensor contiguous(const Tensor& x, MemoryFormat format = MemoryFormat::Contiguous);
Tensor detach(const Tensor& x);
Tensor detach_(const Tensor& x);
Tensor variable_data(const Tensor& x);  // .data: shares storage, new version counter, no autograd
Tensor copy_(const Tensor& self, const Tensor& src);
// x.to(dtype, non_blocking=false, copy): returns x itself unless the dtype differs or copy is set (_to_copy).
Tensor to(const Tensor& x, ScalarType dtype, bool copy = false, MemoryFormat format = MemoryFormat::Preserve);
// x.to(device, x.dtype(), non_blocking=false, copy): x itself when it is on `device` already and copy is unset.
Tensor to(const Tensor& x, Device device, bool copy = false);
// grad.to(options) in derivatives: x itself when dtype and device are x's, else a differentiable copy.
Tensor to_copy_options(const Tensor& x, ScalarType dtype, Device device);
// x.new_tensor(x): x.detach().to(x.dtype(), copy=true), never requiring grad.
Tensor new_tensor(const Tensor& x);

// Python's Tensor.__deepcopy__ (leaves only): the whole storage is copied once per memo and the copy keeps
// offset and strides, so tensors deep-copied with one memo keep sharing storage; requires_grad and .grad
// (deep-copied with the same memo) follow. One memo is one copy.deepcopy call.
struct DeepcopyMemo {
  std::map<const void*, Tensor> storages;  // storage key -> a tensor over the whole copied storage
  std::map<const void*, Tensor> tensors;   // TensorImpl -> its copy (a tensor copied twice is one copy)
  std::set<const void*> copying;           // TensorImpls whose .grad is being copied: a gradient cycle recurses
};
Tensor deepcopy(const Tensor& x, DeepcopyMemo& memo);

// views
Tensor view(const Tensor& x, const Dims& sizes);
Tensor reshape(const Tensor& x, const Dims& sizes);
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1);
Tensor permute(const Tensor& x, const Dims& dims);
Tensor slice(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step);
Tensor select(const Tensor& x, std::int64_t dim, std::int64_t index);
Tensor narrow(const Tensor& x, std::int64_t dim, std::int64_t start, std::int64_t length);
Tensor expand(const Tensor& x, const Dims& sizes);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, std::int64_t dim);
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
Tensor as_strided(const Tensor& x, const Dims& sizes, const Dims& strides, std::int64_t offset);
Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2);
Tensor t(const Tensor& x);
Tensor unfold(const Tensor& x, std::int64_t dim, std::int64_t size, std::int64_t step);
// Multi-output views: their outputs may not be written in place while grad mode is on (CreationMeta).
std::vector<Tensor> unbind(const Tensor& x, std::int64_t dim);
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim);
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim);
std::vector<Tensor> split_with_sizes(const Tensor& x, const Dims& lengths, std::int64_t dim);
// The unsafe_ forms: outputs share x's storage but are not autograd views (no base, a version counter each), so
// in-place writes on them are allowed (and not seen by x's version).
std::vector<Tensor> unsafe_split(const Tensor& x, std::int64_t split_size, std::int64_t dim);
std::vector<Tensor> unsafe_split_with_sizes(const Tensor& x, const Dims& lengths, std::int64_t dim);
std::vector<Tensor> unsafe_chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim);

// Pointwise ops of one tensor and no other argument, and their in-place forms (which return self), as
// X(OpName, function): the harness adapter (impl_backend/backend.cpp) dispatches the program op OpName to
// `function` through this list, so a new op of this shape is declared here and nowhere else.
#define PARITY_IMPL_UNARY_OPS(X)                                                                          \
  X(Neg, neg) X(Exp, exp) X(Sigmoid, sigmoid) X(Tanh, tanh) X(Log, log) X(Sqrt, sqrt) X(Sin, sin) X(Cos, cos) \
  X(Relu, relu) X(Abs, abs) X(Exp_, exp_) X(Sigmoid_, sigmoid_) X(Tanh_, tanh_) X(Log_, log_) X(Sqrt_, sqrt_)  \
  X(Sin_, sin_) X(Cos_, cos_) X(Relu_, relu_) X(Abs_, abs_)
#define PARITY_IMPL_DECLARE_UNARY(op, function) Tensor function(const Tensor& x);
PARITY_IMPL_UNARY_OPS(PARITY_IMPL_DECLARE_UNARY)
#undef PARITY_IMPL_DECLARE_UNARY
// Their out= forms, out first as in ATen's C++ API (at::exp_out(out, self)), returning out; as the binary ones
// below.
#define PARITY_IMPL_UNARY_OUT_OPS(X)                                                                      \
  X(NegOut, neg_out) X(AbsOut, abs_out) X(ExpOut, exp_out) X(SigmoidOut, sigmoid_out) X(TanhOut, tanh_out) \
  X(LogOut, log_out) X(SqrtOut, sqrt_out) X(SinOut, sin_out) X(CosOut, cos_out)
#define PARITY_IMPL_DECLARE_UNARY_OUT(op, function) Tensor function(const Tensor& out, const Tensor& x);
PARITY_IMPL_UNARY_OUT_OPS(PARITY_IMPL_DECLARE_UNARY_OUT)
#undef PARITY_IMPL_DECLARE_UNARY_OUT

// arithmetic
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
// self where condition (bool) holds, else other.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
// value where mask (bool, broadcast) holds, else self; the out-of-place form's result is contiguous, of self's
// and mask's broadcast shape.
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value);
Tensor masked_fill_(const Tensor& self, const Tensor& mask, Scalar value);
// aten::index and aten::index_put_ with one index tensor: int64 (indexing dim 0) or a bool mask (indexing the
// leading dims it covers).
Tensor index(const Tensor& self, const Tensor& index);
Tensor index_put_(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate);
// self + value * tensor1 * tensor2, in the three tensors' common dtype.
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value);
Tensor addcmul_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value);
// Elementwise comparisons: a bool tensor that never requires grad.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& x, Scalar exponent);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim);
// Sums a gradient down to `sizes` (at::sum_to): over leading dims and dims broadcast from 1.
Tensor sum_to(const Tensor& x, const Dims& sizes);

// in place (return self)
Tensor add_(const Tensor& self, const Tensor& other);
Tensor sub_(const Tensor& self, const Tensor& other);
Tensor mul_(const Tensor& self, const Tensor& other);
Tensor div_(const Tensor& self, const Tensor& other);
Tensor add_(const Tensor& self, Scalar other);
Tensor sub_(const Tensor& self, Scalar other);
Tensor mul_(const Tensor& self, Scalar other);
Tensor div_(const Tensor& self, Scalar other);
Tensor zero_(const Tensor& self);
Tensor fill_(const Tensor& self, Scalar value);
Tensor clamp_(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max);

// out= forms, out first as in ATen's C++ API (at::add_out(out, self, other)): the op's result written into out,
// which is resized (then laid out as a fresh result would be) when its shape differs; they return out and refuse
// any tensor requiring grad while grad mode is on.
Tensor add_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor sub_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor mul_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor div_out(const Tensor& out, const Tensor& a, const Tensor& b);
Tensor eq_out(const Tensor& out, const Tensor& a, const Tensor& b);  // no grad refusal: eq has no derivative
Tensor ne_out(const Tensor& out, const Tensor& a, const Tensor& b);

// autograd
// create_graph everywhere: the backward itself is recorded (double backward), as PyTorch's create_graph.
void backward(const Tensor& root, bool retain_graph = false, const Tensor& gradient = Tensor(), bool create_graph = false);
// torch::autograd::backward(roots, {}, retain_graph, create_graph): one backward from several one-element roots.
void backward(const std::vector<Tensor>& roots, bool retain_graph = false, bool create_graph = false);
// torch::autograd::grad({output}, {input}, {}, retain_graph, create_graph, allow_unused)[0]: the gradient as a
// value, no .grad written; undefined for an input the graph does not reach when allow_unused.
Tensor autograd_grad(const Tensor& output, const Tensor& input, bool retain_graph, bool allow_unused = false,
                     bool create_graph = false);
// ... with grad_outputs = {gradient}: the output's gradient given, as backward(gradient) takes it.
Tensor autograd_grad(const Tensor& output, const Tensor& input, const Tensor& gradient, bool retain_graph,
                     bool allow_unused, bool create_graph);
void retain_grad(const Tensor& x);
void set_data(const Tensor& x, const Tensor& new_data);
Tensor requires_grad_(const Tensor& x, bool value = true);

}  // namespace parity::impl
