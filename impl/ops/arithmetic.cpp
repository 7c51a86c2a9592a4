#include <algorithm>

#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/ops/node_builder.h"
#include "impl/ops/out_argument.h"
#include "impl/version_gate.h"

namespace parity::impl {

using autograd::Derivative;
using autograd::Formula;
using autograd::TensorList;
using ops::BinaryOp;
using ops::make_node;
using ops::Operand;

namespace {

// An input in the dtype a kernel computes in (ops::iterator_input_layout says whose layout the output follows).
Tensor converted(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::allocate_uninitialized(t.layout().preserved(), dtype, t.device());
  ops::copy_kernel(out, t);
  return out;
}

void check_binary_types(BinaryOp op, ScalarType a, ScalarType b) {
  if (op != BinaryOp::Sub) return;
  bool ab = a == ScalarType::Bool, bb = b == ScalarType::Bool;
  if (ab && bb)
    fail(ErrorKind::DType,
         "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
         "operator instead.",
         dtype_refusal_class());
  if (ab || bb)
    fail(ErrorKind::DType,
         "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
         "use the `~` or `logical_not()` operator instead.",
         dtype_refusal_class());
}

// The dtype the kernel computes in: the operands' result type, floating for true division whatever they are.
ScalarType compute_type(BinaryOp op, ScalarType result) {
  return op == BinaryOp::Div && !is_floating(result) ? kDefaultFloat : result;
}

// Whether the kernel reads the second operand in float (VersionGate::ReducedFloatScalarOperandInOpmath):
// LibTorch's CPU mul and div of a float16 or bfloat16 result take a one-element second operand's original value
// (TensorIterator's original_scalar_value<opmath_t>) rather than its conversion to that dtype.
bool reads_operand_in_opmath(BinaryOp op, ScalarType t, Device d, std::int64_t numel) {
  return (op == BinaryOp::Mul || op == BinaryOp::Div) && (t == ScalarType::Float16 || t == ScalarType::BFloat16) &&
         d.type == DeviceType::CPU && numel == 1 && follows(VersionGate::ReducedFloatScalarOperandInOpmath);
}

// out (of t) = a op b computed in float, a first rounded to t as TensorIterator's conversion does, b's original
// value converted to float: only the result is rounded.
void binary_in_opmath(BinaryOp op, const Tensor& out, const Tensor& a, ScalarType t, const Tensor& b) {
  Tensor wide = Tensor::allocate_uninitialized(out.layout(), ScalarType::Float32, out.device());
  ops::binary_kernel(op, wide, converted(converted(a, t), ScalarType::Float32),
                     ops::kernel_operand(converted(b, ScalarType::Float32), out.device()));
  ops::copy_kernel(out, wide);
}

// out = a op b of the broadcast shape, b given in the compute dtype t (cb), on device d.
Tensor binary_values(BinaryOp op, const Dims& shape, const Tensor& a, const Tensor& b, const Tensor& cb, ScalarType t,
                     Device d) {
  Tensor ca = converted(a, t);
  Tensor out = Tensor::allocate_uninitialized(
      ops::elementwise_layout(shape, {&ops::iterator_input_layout(ca, a), &ops::iterator_input_layout(cb, b)}), t, d);
  if (reads_operand_in_opmath(op, t, d, b.numel())) {
    binary_in_opmath(op, out, ca, t, b);
    return out;
  }
  ops::binary_kernel(op, out, ops::kernel_operand(std::move(ca), d), ops::kernel_operand(cb, d));
  return out;
}

Tensor binary_values(BinaryOp op, const Tensor& a, const Tensor& b) {
  check_binary_types(op, a.dtype(), b.dtype());
  const Dims shape = broadcast_shapes(a.sizes(), b.sizes());
  const Operand oa{a, false}, ob{b, false};
  const ScalarType t = compute_type(op, ops::result_type({&oa, &ob}));
  const Device d = ops::common_device(nullptr, {&a, &b}, /*allow_cpu_scalars=*/true);
  return binary_values(op, shape, a, b, converted(b, t), t, d);
}

// A Scalar operand is TensorIterator's wrapped number: a CPU scalar, which broadcasts to any shape and joins a
// tensor on any device.
Tensor binary_values(BinaryOp op, const Tensor& a, Scalar s) {
  check_binary_types(op, a.dtype(), ops::wrapped_dtype(s));
  const Operand oa{a, false};
  const ScalarType t = compute_type(op, ops::result_type({&oa}, s));
  const Tensor cs = ops::wrap_scalar(s, t);
  // The wrapped number as the kernel reads it in float, where it does (reads_operand_in_opmath).
  const bool wide = reads_operand_in_opmath(op, t, a.device(), 1);
  return binary_values(op, a.sizes(), a, wide ? ops::wrap_scalar(s, ScalarType::Float32) : cs, cs, t, a.device());
}

// self op= other, other given in the compute dtype t (cother) after its own checks, the result type's cast to
// self's dtype among them (common_device's). `other`: as given (a wrapped number converted to float where
// reads_operand_in_opmath).
void binary_inplace_values(BinaryOp op, const Tensor& self, ScalarType t, const Tensor& cother, Device d,
                           const Tensor& other) {
  if (reads_operand_in_opmath(op, t, d, other.numel())) {
    binary_in_opmath(op, self, self, t, other);
  } else if (t == self.dtype()) {
    ops::binary_kernel(op, self, self, ops::kernel_operand(cother, d));
  } else {
    Tensor tmp = Tensor::allocate_uninitialized(Layout::dense(self.sizes()), t, d);
    ops::binary_kernel(op, tmp, converted(self, t), ops::kernel_operand(cother, d));
    ops::copy_kernel(self, tmp);
  }
}

void binary_inplace_values(BinaryOp op, const Tensor& self, const Tensor& other) {
  check_binary_types(op, self.dtype(), other.dtype());
  ops::check_no_overlap(self, {&other});
  Dims shape = broadcast_shapes(self.sizes(), other.sizes());
  PARITY_CHECK(shape == self.sizes(), ErrorKind::Shape,
        "output with shape " + format_dims(self.sizes()) + " doesn't match the broadcast shape " + format_dims(shape));
  const Operand oself{self, false}, oother{other, false};
  const ScalarType t = compute_type(op, ops::result_type({&oself, &oother}));
  const Device d = ops::common_device(&self, {&other}, /*allow_cpu_scalars=*/true, t);
  binary_inplace_values(op, self, t, converted(other, t), d, other);
}

// The wrapped number is a fresh CPU scalar: it overlaps nothing (self still must not overlap itself), broadcasts to
// any shape, and joins any device.
void binary_inplace_values(BinaryOp op, const Tensor& self, Scalar s) {
  check_binary_types(op, self.dtype(), ops::wrapped_dtype(s));
  ops::check_no_overlap(self, {});
  const Operand oself{self, false};
  const ScalarType t = compute_type(op, ops::result_type({&oself}, s));
  const Device d = ops::common_device(&self, {}, /*allow_cpu_scalars=*/true, t);
  const Tensor cs = ops::wrap_scalar(s, t);
  const bool wide = reads_operand_in_opmath(op, t, d, 1);
  binary_inplace_values(op, self, t, cs, d, wide ? ops::wrap_scalar(s, ScalarType::Float32) : cs);
}

Derivative node_of(BinaryOp op, bool scalar) {
  switch (op) {
    case BinaryOp::Add: return scalar ? Derivative::AddBackward1 : Derivative::AddBackward0;
    case BinaryOp::Sub: return scalar ? Derivative::SubBackward1 : Derivative::SubBackward0;
    case BinaryOp::Mul: return scalar ? Derivative::MulBackward1 : Derivative::MulBackward0;
    case BinaryOp::Div: return scalar ? Derivative::DivBackward1 : Derivative::DivBackward0;
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

// Backward node of a tensor-tensor op. Saves, as derivatives.yaml says, only what a needed gradient uses:
// saved[0] = self (or self's value before an in-place write), saved[1] = other: LibTorch's MulBackward0 and
// DivBackward0 unpack self_ first, so when both were modified the version-mismatch error is self's.
// PyTorch's generated nodes compute their inputs' gradients in the alphabetical order of the inputs' names
// (load_derivatives.py sorts them): other's before self's. Under create_graph that order numbers the nodes the
// formulas make, and so the order a second backward runs them and sums what they deliver.
Rc<Formula> binary_node(BinaryOp op, const Tensor& self, const Tensor& other, const Tensor& self_value) {
  auto node = make_node(node_of(op, false), {&self, &other}, [op](const Tensor& g, const TensorList& s, const Formula& n) {
    TensorList out(2);
    // s holds self and other for mul and div only: add and sub save nothing.
    switch (op) {
      case BinaryOp::Add:
        out = {g, g};
        break;
      case BinaryOp::Sub:
        out = {g, n.task_should_compute_output(1) ? neg(g) : Tensor()};
        break;
      case BinaryOp::Mul:
        if (n.task_should_compute_output(1)) out[1] = mul(g, s[0]);
        if (n.task_should_compute_output(0)) out[0] = mul(g, s[1]);
        break;
      case BinaryOp::Div:
        if (n.task_should_compute_output(1)) out[1] = mul(neg(g), div(div(s[0], s[1]), s[1]));
        if (n.task_should_compute_output(0)) out[0] = div(g, s[1]);
        break;
    }
    if (!n.task_should_compute_output(0)) out[0] = Tensor();
    if (!n.task_should_compute_output(1)) out[1] = Tensor();
    return out;
  });
  bool need_self = node->should_compute_output(0), need_other = node->should_compute_output(1);
  // A tensor used by both inputs' formulas is saved whenever the node exists (div's other), one used by a single
  // formula only when that input needs grad.
  bool save_other = (op == BinaryOp::Mul && need_self) || op == BinaryOp::Div;
  bool save_self = (op == BinaryOp::Mul || op == BinaryOp::Div) && need_other;
  if (op == BinaryOp::Mul || op == BinaryOp::Div) {  // add and sub save nothing
    node->save("self", save_self ? self_value : Tensor());
    node->save("other", save_other ? other : Tensor());
  }
  return node;
}

// 1.13's derivatives.yaml multiplies and divides by at::scalar_to_tensor(other), a 0-dim tensor that is no
// wrapped number: under create_graph the gradient's grad_fn is MulBackward0 or DivBackward0. 2.x's by the Scalar
// itself (VersionGate::ScalarOpsDeriveWithScalar): MulBackward1 or DivBackward1.
Rc<Formula> scalar_node(BinaryOp op, const Tensor& self, Scalar s) {
  return make_node(node_of(op, true), {&self}, [op, s](const Tensor& g, const TensorList&, const Formula&) {
    // 1.13's 0-dim tensor takes part in type promotion: a 0-dim gradient times a float64 one computes in float64
    // (0 * -3.5e38 is -0 there, where float32's -inf gives NaN), and the engine casts the result back.
    const bool by_scalar = follows(VersionGate::ScalarOpsDeriveWithScalar);
    switch (op) {
      case BinaryOp::Mul: return TensorList{by_scalar ? mul(g, s) : mul(g, ops::wrap_scalar(s))};
      case BinaryOp::Div: return TensorList{by_scalar ? div(g, s) : div(g, ops::wrap_scalar(s))};
      case BinaryOp::Add:
      case BinaryOp::Sub: return TensorList{g};
    }
    PARITY_UNREACHABLE("no case for this enum value");
  });
}

// Nodes are built before the kernel runs, as in PyTorch's generated code: reading an input's grad_fn can raise.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  auto node = autograd::compute_requires_grad({&a, &b}) ? binary_node(op, a, b, a) : nullptr;
  Tensor out = binary_values(op, a, b);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor binary(BinaryOp op, const Tensor& a, Scalar s) {
  auto node = autograd::compute_requires_grad({&a}) ? scalar_node(op, a, s) : nullptr;
  Tensor out = binary_values(op, a, s);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor binary_(BinaryOp op, const Tensor& self, const Tensor& other) {
  bool rg = autograd::compute_requires_grad({&self, &other});
  autograd::check_inplace(self, rg);
  Rc<Formula> node;
  if (rg) {
    // The derivative for `other` reads self's value from before the write: keep a copy when it will be needed.
    bool need_original = (op == BinaryOp::Mul || op == BinaryOp::Div) && autograd::gradient_edge(other).valid();
    node = binary_node(op, self, other, need_original ? clone(self) : self);
  }
  binary_inplace_values(op, self, other);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

Tensor binary_(BinaryOp op, const Tensor& self, Scalar s) {
  bool rg = autograd::compute_requires_grad({&self});
  autograd::check_inplace(self, rg);
  auto node = rg ? scalar_node(op, self, s) : nullptr;
  binary_inplace_values(op, self, s);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
  }
  PARITY_UNREACHABLE("no case for this enum value");
}

// The out= form of a binary op (at::add_out(out, self, other)), in TensorIterator's order: VariableType refuses
// any tensor requiring grad (the inputs, then out), the meta function's own checks (sub's bool operands), then
// the iterator's: out's overlaps, the broadcast (and an out that is also an input must have its shape), the
// result type's cast into out's dtype; out is resized when its shape differs, written, and its version bumped
// once.
Tensor binary_out(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  ops::refuse_out_requiring_grad(op_name(op), {&a, &b}, out);
  check_binary_types(op, a.dtype(), b.dtype());
  ops::check_no_overlap(out, {&a, &b});
  const Dims shape = broadcast_shapes(a.sizes(), b.sizes());
  ops::check_out_shape(out, shape, {&a, &b});
  const Operand oa{a, false}, ob{b, false};
  const ScalarType t = compute_type(op, ops::result_type({&oa, &ob}));
  const Device d = ops::common_device(&out, {&a, &b}, /*allow_cpu_scalars=*/true, t);
  Tensor ca = converted(a, t), cb = converted(b, t);
  ops::resize_output(out, shape,
                     ops::elementwise_layout(shape, {&ops::iterator_input_layout(ca, a), &ops::iterator_input_layout(cb, b)}));
  ops::write_result(out, t, [&](const Tensor& into) {
    ops::binary_kernel(op, into, ops::kernel_operand(std::move(ca), d), ops::kernel_operand(std::move(cb), d));
  });
  out.bump_version();
  return out;
}

}  // namespace

namespace {
// eq, ne: compared in the operands' common dtype, a bool result that never joins the graph (derivatives.yaml:
// output_differentiability False), laid out as any elementwise result. With an out (eq.Tensor_out), nothing
// refuses a tensor requiring grad (no derivative, no check), and the bool result is written into out's dtype,
// whichever it is.
Tensor compare(ops::CompareOp op, const Tensor& a, const Tensor& b, const Tensor* out = nullptr) {
  if (out) ops::check_no_overlap(*out, {&a, &b});
  const Dims shape = broadcast_shapes(a.sizes(), b.sizes());
  if (out) ops::check_out_shape(*out, shape, {&a, &b});
  const Device d = ops::common_device(out, {&a, &b}, /*allow_cpu_scalars=*/true);
  const Operand oa{a, false}, ob{b, false};
  const ScalarType t = ops::result_type({&oa, &ob});
  Tensor ca = converted(a, t), cb = converted(b, t);
  const Layout fresh =
      ops::elementwise_layout(shape, {&ops::iterator_input_layout(ca, a), &ops::iterator_input_layout(cb, b)});
  Tensor result = out ? *out : Tensor::allocate_uninitialized(fresh, ScalarType::Bool, d);
  if (out) ops::resize_output(result, shape, fresh);
  ops::write_result(result, ScalarType::Bool, [&](const Tensor& into) {
    ops::compare_kernel(op, into, ops::kernel_operand(std::move(ca), d), ops::kernel_operand(std::move(cb), d));
  });
  if (out) result.bump_version();
  return result;
}
}  // namespace

// where(condition, self, other): WhereBackward0 is made first and saves the condition only; then the values, in
// self's and other's common dtype (the condition must be bool), laid out from all three as TensorIterator does.
// Each side's gradient is the output gradient where that side was chosen, 0 elsewhere (the engine sums it down
// to the side's shape).
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&self, &other})) {
    node = make_node(Derivative::WhereBackward0, {&self, &other}, [](const Tensor& g, const TensorList& s, const Formula& n) {
      const Tensor zero = zeros({}, g.dtype());  // a CPU scalar, as derivatives.yaml's at::scalar_tensor
      TensorList out(2);
      // other's gradient first: generated nodes go through their inputs in alphabetical order.
      if (n.task_should_compute_output(1)) out[1] = where(s[0], zero, g);
      if (n.task_should_compute_output(0)) out[0] = where(s[0], g, zero);
      return out;
    });
    node->save("condition", condition);
  }
  Operand a{self, false}, b{other, false};
  const ScalarType t = ops::result_type({&a, &b});
  PARITY_CHECK(condition.dtype() == ScalarType::Bool, ErrorKind::DType,
               "where expected condition to be a boolean tensor, but got a tensor with dtype " +
                   std::string(type_name(condition.dtype())));
  const Dims shape = broadcast_shapes(broadcast_shapes(condition.sizes(), self.sizes()), other.sizes());
  const Device d = ops::common_device(nullptr, {&condition, &self, &other}, /*allow_cpu_scalars=*/true);
  // where_self converts both to the result type with .to() itself, on every device: the copies' layouts count.
  Tensor ca = converted(self, t), cb = converted(other, t);
  Tensor out = Tensor::allocate_uninitialized(ops::elementwise_layout(shape, {&condition.layout(), &ca.layout(), &cb.layout()}), t, d);
  ops::where_kernel(out, ops::kernel_operand(condition, d), ops::kernel_operand(std::move(ca), d), ops::kernel_operand(std::move(cb), d));
  if (node) autograd::set_history(out, node);
  return out;
}

void ops::masked_fill_checked(const Tensor& self, const Tensor& mask, double value) {
  if (self.device().type == DeviceType::CPU && mask.device().type == DeviceType::CPU) {
    // masked_fill__cpu: the dtype, then TensorIterator's broadcast of the mask to self.
    PARITY_CHECK(mask.dtype() == ScalarType::Bool, ErrorKind::DType,
                 "masked_fill_ only supports boolean masks, but got mask with dtype " +
                     std::string(follows(VersionGate::MaskedFillNamesTypeMeta) ? type_meta_name(mask.dtype())
                                                                               : type_name(mask.dtype())));
    ops::check_no_partial_overlap(self, {&mask});
    const Dims shape = broadcast_shapes(self.sizes(), mask.sizes());
    PARITY_CHECK(shape == self.sizes(), ErrorKind::Shape,
                 "output with shape " + format_dims(self.sizes()) + " doesn't match the broadcast shape " +
                     format_dims(shape));
  } else {
    // Either on cuda dispatches to masked_fill__cuda: the devices, the dtype in its words, then expand_inplace
    // of the mask to self's sizes.
    PARITY_CHECK(self.device() == mask.device(), ErrorKind::Device,
                 "expected self and mask to be on the same device, but got mask on " + mask.device().str() +
                     " and self on " + self.device().str());
    PARITY_CHECK(mask.dtype() == ScalarType::Bool, ErrorKind::DType,
                 "masked_fill only supports boolean masks, but got dtype " + std::string(type_name(mask.dtype())));
    ops::check_no_partial_overlap(self, {&mask});
    (void)geometry::expand(mask.layout(), self.sizes(), mask.type_name());
  }
  ops::check_scalar_fits(value, self.dtype());
  ops::masked_fill_kernel(self, mask, value);
}

namespace {

// MaskedFillBackward0 saves the mask only: the gradient is the output gradient with the filled elements zeroed
// (summed down to self's shape by the engine when the mask broadcast self).
Rc<Formula> masked_fill_node(const Tensor& self, const Tensor& mask) {
  auto node = make_node(Derivative::MaskedFillBackward0, {&self}, [](const Tensor& g, const TensorList& s, const Formula&) {
    return TensorList{masked_fill(g, s[0], Scalar::of_int(0))};
  });
  node->save("mask", mask);
  return node;
}

// AddcmulBackward0 saves each factor for the other's gradient, when that gradient is needed: tensor2 first, as
// the generated node declares (and unpacks) it, so that a version error names tensor2 when both were written.
Rc<Formula> addcmul_node(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  auto node = make_node(Derivative::AddcmulBackward0, {&self, &t1, &t2},
                        [value](const Tensor& g, const TensorList& s, const Formula& n) {
                          TensorList out(3);
                          if (n.task_should_compute_output(0)) out[0] = g;
                          if (n.task_should_compute_output(1)) out[1] = mul(g, mul(s[0], value));
                          if (n.task_should_compute_output(2)) out[2] = mul(g, mul(s[1], value));
                          return out;
                        });
  node->save("tensor2", node->should_compute_output(1) ? t2 : Tensor());
  node->save("tensor1", node->should_compute_output(2) ? t1 : Tensor());
  return node;
}

// TensorIterator's checks for self + value * t1 * t2 into `out` (self itself when in place): the common dtype,
// bool refused by the kernel's dispatch, the value converted to it.
ScalarType addcmul_type(const Tensor& self, const Tensor& t1, const Tensor& t2) {
  Operand a{self, false}, b{t1, false}, c{t2, false};
  return ops::result_type({&a, &b, &c});
}
// TensorIterator's device rule, which lets one CPU scalar join a device's operands (and checks, with out's
// device, that the common dtype t casts to it); the CUDA kernel then takes a CPU scalar as tensor2 only.
Device addcmul_device(const Tensor* out, const Tensor& self, const Tensor& t1, const Tensor& t2,
                      std::optional<ScalarType> t = std::nullopt) {
  const Device d = ops::common_device(out, {&self, &t1, &t2}, /*allow_cpu_scalars=*/true, t);
  if (d.type == DeviceType::CPU) return d;
  auto cpu_scalar = [](const Tensor& x) { return x.device().type == DeviceType::CPU && x.dim() == 0; };
  PARITY_CHECK(!cpu_scalar(self), ErrorKind::Device,
               "CPU Scalar support for self argument is not supported when calling addcmul on CUDA tensors.");
  PARITY_CHECK(!cpu_scalar(t1), ErrorKind::Device,
               "CPU Scalar support for tensor1 argument is not supported when calling addcmul on CUDA tensors. However, "
               "CPU Scalar support for tensor2 is supported, please swap your tensor1 and tensor2 terms.");
  return d;
}

void addcmul_values(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, ScalarType t,
                    double value) {
  const Device d = addcmul_device(&out, self, t1, t2, t);
  ops::check_dispatch(d, {"addcmul_cpu_out", {ScalarType::Bool, ScalarType::Float16}, "addcmul_cuda", {ScalarType::Bool}},
                      t);
  // addcmul_cpu_kernel converts the value to the type it computes in: float for the 16-bit floats.
  const bool reduced = t == ScalarType::Float16 || t == ScalarType::BFloat16;
  ops::check_scalar_fits(value, reduced ? ScalarType::Float32 : t);
  const Tensor t2_operand = ops::kernel_operand(converted(t2, t), d);
  if (out.dtype() == t) {
    ops::addcmul_kernel(out, converted(self, t), converted(t1, t), t2_operand, value);
  } else {
    Tensor tmp = Tensor::allocate_uninitialized(Layout::dense(out.sizes()), t, d);
    ops::addcmul_kernel(tmp, converted(self, t), converted(t1, t), t2_operand, value);
    ops::copy_kernel(out, tmp);
  }
}
}  // namespace

Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value) {
  auto node = autograd::compute_requires_grad({&self}) ? masked_fill_node(self, mask) : nullptr;
  // ATen expands self and mask to their common shape (mask first) and fills a contiguous clone.
  const Dims shape = broadcast_shapes(mask.sizes(), self.sizes());
  Tensor out = Tensor::allocate_uninitialized(Layout::dense(shape), self.dtype(), self.device());
  ops::copy_kernel(out, self);
  ops::masked_fill_checked(out, mask, value.value);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor masked_fill_(const Tensor& self, const Tensor& mask, Scalar value) {
  const bool rg = autograd::compute_requires_grad({&self});
  autograd::check_inplace(self, rg);
  auto node = rg ? masked_fill_node(self, mask) : nullptr;
  ops::masked_fill_checked(self, mask, value.value);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  auto node = autograd::compute_requires_grad({&self, &t1, &t2}) ? addcmul_node(self, t1, t2, value) : nullptr;
  const Dims shape = broadcast_shapes(broadcast_shapes(self.sizes(), t1.sizes()), t2.sizes());
  const ScalarType t = addcmul_type(self, t1, t2);
  const Device d = addcmul_device(nullptr, self, t1, t2);
  Tensor cs = converted(self, t), c1 = converted(t1, t), c2 = converted(t2, t);
  Tensor out = Tensor::allocate_uninitialized(
      ops::elementwise_layout(shape, {&ops::iterator_input_layout(cs, self), &ops::iterator_input_layout(c1, t1),
                                      &ops::iterator_input_layout(c2, t2)}),
      t, d);
  addcmul_values(out, cs, c1, c2, t, value.value);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor addcmul_(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  const bool rg = autograd::compute_requires_grad({&self, &t1, &t2});
  autograd::check_inplace(self, rg);
  auto node = rg ? addcmul_node(self, t1, t2, value) : nullptr;
  ops::check_no_overlap(self, {&t1, &t2});
  const Dims shape = broadcast_shapes(broadcast_shapes(self.sizes(), t1.sizes()), t2.sizes());
  PARITY_CHECK(shape == self.sizes(), ErrorKind::Shape,
               "output with shape " + format_dims(self.sizes()) + " doesn't match the broadcast shape " + format_dims(shape));
  addcmul_values(self, self, t1, t2, addcmul_type(self, t1, t2), value.value);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

Tensor eq(const Tensor& a, const Tensor& b) { return compare(ops::CompareOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(ops::CompareOp::Ne, a, b); }
Tensor eq_out(const Tensor& out, const Tensor& a, const Tensor& b) { return compare(ops::CompareOp::Eq, a, b, &out); }
Tensor ne_out(const Tensor& out, const Tensor& a, const Tensor& b) { return compare(ops::CompareOp::Ne, a, b, &out); }
Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
Tensor add(const Tensor& a, Scalar b) { return binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, Scalar b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, Scalar b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, Scalar b) { return binary(BinaryOp::Div, a, b); }
Tensor add_(const Tensor& s, const Tensor& o) { return binary_(BinaryOp::Add, s, o); }
Tensor sub_(const Tensor& s, const Tensor& o) { return binary_(BinaryOp::Sub, s, o); }
Tensor mul_(const Tensor& s, const Tensor& o) { return binary_(BinaryOp::Mul, s, o); }
Tensor div_(const Tensor& s, const Tensor& o) { return binary_(BinaryOp::Div, s, o); }
Tensor add_(const Tensor& s, Scalar o) { return binary_(BinaryOp::Add, s, o); }
Tensor sub_(const Tensor& s, Scalar o) { return binary_(BinaryOp::Sub, s, o); }
Tensor mul_(const Tensor& s, Scalar o) { return binary_(BinaryOp::Mul, s, o); }
Tensor div_(const Tensor& s, Scalar o) { return binary_(BinaryOp::Div, s, o); }
Tensor add_out(const Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Add, out, a, b); }
Tensor sub_out(const Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Sub, out, a, b); }
Tensor mul_out(const Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Mul, out, a, b); }
Tensor div_out(const Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Div, out, a, b); }

namespace {
void check_negatable(const Tensor& x) {
  if (x.dtype() == ScalarType::Bool)
    fail(ErrorKind::DType,
         "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
         "`~` or `logical_not()` operator instead.",
         dtype_refusal_class());
}
}  // namespace

Tensor neg(const Tensor& x) {
  check_negatable(x);
  auto node = autograd::compute_requires_grad({&x})
                  ? make_node(Derivative::NegBackward0, {&x}, [](const Tensor& g, const TensorList&, const Formula&) {
                      return TensorList{neg(g)};
                    })
                  : nullptr;
  Tensor out = Tensor::allocate_uninitialized(ops::elementwise_layout(x.sizes(), {&x.layout()}), x.dtype(), x.device());
  ops::unary_kernel(ops::UnaryOp::Neg, out, x);
  if (node) autograd::set_history(out, node);
  return out;
}

// neg.out: structured, so its meta function's bool check comes first after VariableType's; then a plain
// unary_op iterator, which takes only an out of self's dtype.
Tensor neg_out(const Tensor& out, const Tensor& x) {
  ops::refuse_out_requiring_grad("neg", {&x}, out);
  check_negatable(x);
  ops::check_no_overlap(out, {&x});
  ops::common_device(&out, {&x}, /*allow_cpu_scalars=*/false);
  ops::check_out_dtype(out, x.dtype(), ops::OutDtype::MustMatch);
  ops::resize_output(out, x.sizes(), ops::elementwise_layout(x.sizes(), {&x.layout()}));
  ops::unary_kernel(ops::UnaryOp::Neg, out, x);
  out.bump_version();
  return out;
}

Tensor pow(const Tensor& x, Scalar e) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x})) {
    double ev = e.value;
    node = make_node(Derivative::PowBackward0, {&x}, [ev](const Tensor& g, const TensorList& s, const Formula&) {
      if (ev == 0) return TensorList{zeros_like(s[0], MemoryFormat::Contiguous)};
      return TensorList{mul(g, mul(pow(s[0], Scalar::of(ev - 1)), Scalar::of(ev)))};
    });
    node->save("self", x);
  }
  PARITY_CHECK(!(is_integral(x.dtype(), true) && e.kind != Scalar::Kind::Float && e.value < 0), ErrorKind::DType,
        "Integers to negative integer powers are not allowed.");
  Operand base_op{x, false}, exp_op{ops::wrap_scalar(e), true};
  ScalarType t = ops::result_type({&base_op, &exp_op});
  // pow's meta converts the base with .to() itself, on every device: the copy's layout counts.
  Tensor base = converted(x, t);
  Tensor out = Tensor::allocate_uninitialized(ops::elementwise_layout(base.sizes(), {&base.layout()}), t, x.device());
  if (e.value == 0) {
    ops::fill_kernel(out, 1);
  } else if (e.value == 1) {
    ops::copy_kernel(out, base);
  } else {
    ops::check_dispatch(out.device(), {"pow", {ScalarType::Bool}, "pow", {ScalarType::Bool}}, t);
    // pow_tensor_scalar_kernel converts the exponent to double for float and double, to the element type
    // otherwise (float16, bfloat16, the integers): that conversion refuses what overflows it.
    if (t != ScalarType::Float32 && t != ScalarType::Float64) ops::check_scalar_fits(e.value, t);
    ops::pow_kernel(out, base, e.value);
  }
  if (node) autograd::set_history(out, node);
  return out;
}

namespace {
// resize_reduction wraps every dim (a range error first) before make_dim_mask looks for repeated ones: a 0-dim
// tensor's dims wrap to 0 (dim_list_to_bitset's maybe_wrap_dim), so [0, -1] repeats one there too.
std::vector<bool> reduce_mask(const Tensor& x, const Dims& dims) {
  std::vector<bool> mask(static_cast<std::size_t>(x.dim()), dims.empty());
  Dims wrapped;
  for (auto d : dims) wrapped.push_back(wrap_dim(d, x.dim()));
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(x.dim(), 1)), false);
  for (auto w : wrapped) {
    PARITY_CHECK(!seen[w], ErrorKind::IndexRange,
          "dim " + std::to_string(w) + " appears multiple times in the list of dims");
    seen[w] = true;
    if (x.dim() > 0) mask[w] = true;
  }
  return mask;
}

Tensor reduce_values(const Tensor& x, const std::vector<bool>& mask, bool keepdim, ScalarType out_type) {
  Dims keep = x.sizes();
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) keep[i] = 1;
  Tensor out = empty(keep, out_type, MemoryFormat::Contiguous, x.device());
  ops::sum_kernel(out, x, mask, keepdim);
  if (keepdim) return out;
  Dims shape;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (!mask[i]) shape.push_back(x.sizes()[i]);
  return autograd::make_alias(out, Layout::dense(shape));
}

Tensor sum_backward(const Tensor& g, const Dims& in, const std::vector<bool>& mask, bool keepdim, bool all) {
  Tensor r = g;
  if (!keepdim && !in.empty() && !all)
    for (std::size_t i = 0; i < mask.size(); ++i)
      if (mask[i]) r = unsqueeze(r, static_cast<std::int64_t>(i));
  return expand(r, in);
}

Tensor reduce(const Tensor& x, const Dims& dims, bool keepdim, bool mean, bool with_dims) {
  // The node comes first (reading x's grad_fn can raise); the dims are checked after, by reduce_mask.
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x})) {
    const Derivative d = mean ? (with_dims ? Derivative::MeanBackward1 : Derivative::MeanBackward0)
                              : (with_dims ? Derivative::SumBackward1 : Derivative::SumBackward0);
    node = make_node(d, {&x}, [](const Tensor&, const TensorList&, const Formula&) { return TensorList{}; });
    // LibTorch 1.13's MeanBackward1 keeps self itself (its formula reads self's numel); 2.x's keeps its sizes.
    if (mean && with_dims && !follows(VersionGate::MeanDimSavesSizes)) node->save("self", x);
  }
  if (mean && !is_floating(x.dtype()))
    fail(ErrorKind::DType,
         "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: " +
             std::string(type_name(x.dtype())),
         dtype_refusal_class());
  std::vector<bool> mask = with_dims ? reduce_mask(x, dims) : std::vector<bool>(static_cast<std::size_t>(x.dim()), true);
  ScalarType t = is_floating(x.dtype()) ? x.dtype() : ScalarType::Int64;
  Tensor out = reduce_values(x, mask, with_dims ? keepdim : false, t);
  std::int64_t n = 1;
  for (std::size_t i = 0; i < mask.size(); ++i)
    if (mask[i]) n *= x.sizes()[i];
  if (mean)
    ops::binary_kernel(BinaryOp::Div, out, out,
                       ops::kernel_operand(converted(ops::wrap_scalar(Scalar::of(static_cast<double>(n))), t), out.device()));
  if (node) {
    Dims in = x.sizes();
    bool all = !with_dims || dims.empty();
    // 1.13's MeanBackward1 is mean_backward(grad, self_sizes, dim, self.numel(), keepdim): the sizes saved at the
    // forward, but the numel of self as it is now, which an all-dims mean divides by (set_data may have changed
    // it). The other divisors are the forward's.
    const bool numel_of_saved_self = mean && with_dims && all && !follows(VersionGate::MeanDimSavesSizes);
    node->set_formula([in, mask, keepdim, all, mean, n, with_dims, numel_of_saved_self](
                          const Tensor& g, const TensorList& saved, const Formula&) {
      Tensor r = with_dims ? sum_backward(g, in, mask, keepdim, all) : expand(g, in);
      const std::int64_t divisor = numel_of_saved_self ? saved[0].numel() : n;
      return TensorList{mean ? div(r, Scalar::of_int(divisor)) : r};
    });
    autograd::set_history(out, node);
  }
  return out;
}
}  // namespace

Tensor sum(const Tensor& x) { return reduce(x, {}, false, false, false); }
Tensor sum(const Tensor& x, const Dims& dims, bool keepdim) { return reduce(x, dims, keepdim, false, true); }
Tensor mean(const Tensor& x) { return reduce(x, {}, false, true, false); }
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim) { return reduce(x, dims, keepdim, true, true); }

Tensor sum_to(const Tensor& x, const Dims& shape) {
  if (shape.empty()) return sum(x);
  const std::int64_t lead = x.dim() - static_cast<std::int64_t>(shape.size());
  Dims dims;
  for (std::int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (std::int64_t i = lead; i < x.dim(); ++i)
    if (shape[i - lead] == 1 && x.sizes()[i] != 1) dims.push_back(i);
  Tensor r = dims.empty() ? x : sum(x, dims, true);
  return lead > 0 ? view(r, shape) : r;
}

namespace {
Tensor fill_with(const Tensor& self, double value, Derivative d) {
  bool rg = autograd::compute_requires_grad({&self});
  autograd::check_inplace(self, rg);
  // The kernel converts the value: after the autograd layer's checks.
  ops::check_fill_value(value, self);
  auto node = rg ? make_node(d, {&self}, [](const Tensor& g, const TensorList&, const Formula&) {
                     return TensorList{zeros_like(g)};
                   })
                 : nullptr;
  ops::fill_kernel(self, value);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}
}  // namespace

Tensor zero_(const Tensor& self) { return fill_with(self, 0, Derivative::ZeroBackward0); }
Tensor fill_(const Tensor& self, Scalar value) { return fill_with(self, value.value, Derivative::FillBackward2); }

}  // namespace parity::impl
