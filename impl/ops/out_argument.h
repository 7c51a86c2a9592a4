// What every out= form (at::exp_out(out, self), at::eq_out(out, self, other)) does with its out argument,
// written once: VariableType's refusal of tensors requiring grad, at::native::resize_output, and TensorIterator's
// write of a result computed in one dtype into an out of another. Internal to impl/ops.
#pragma once
#include <functional>
#include <initializer_list>
#include <string_view>

#include "impl/ops.h"

namespace parity::impl::ops {

// VariableType's check for a differentiable op's out= form, inputs first and then out: with grad mode on, none
// may require grad ("exp(): functions with out=... arguments don't support automatic differentiation, ...").
void refuse_out_requiring_grad(std::string_view op, std::initializer_list<const Tensor*> inputs, const Tensor& out);

// TensorIterator resizes only a write-only out: one that is also an input (the same tensor) must already have
// the result's shape ("output with shape [3] doesn't match the broadcast shape [2, 3]").
void check_out_shape(const Tensor& out, const Dims& shape, std::initializer_list<const Tensor*> inputs);

// at::native::resize_output: an out of another shape is resized (its storage grown in place when too small, so
// every tensor over it sees the growth) and then, having been resized, given the layout TensorIterator gives a
// fresh result (`fresh`). LibTorch warns when the out it resized had elements; warnings are not compared. An out
// of the right shape keeps its strides.
void resize_output(const Tensor& out, const Dims& shape, const Layout& fresh);

// The dtype out may have, for an op computing in `computed`. TensorIterator's unary_float_op, binary_op and
// friends cast the result into any dtype it can be cast to safely ("result type Float can't be cast to the
// desired output type Long"); its plain unary_op (neg, abs) takes only the computed dtype ("Found dtype Double
// but expected Float"); a comparison writes its bool result into any dtype (Unchecked).
enum class OutDtype { CastSafely, MustMatch, Unchecked };
void check_out_dtype(const Tensor& out, ScalarType computed, OutDtype rule);

// Runs `kernel` into out when the op computes in out's dtype, else into a temporary of `computed` that is then
// cast into out, as TensorIterator's cast_common_dtype_to_outputs does.
void write_result(const Tensor& out, ScalarType computed, const std::function<void(const Tensor& into)>& kernel);

}  // namespace parity::impl::ops
