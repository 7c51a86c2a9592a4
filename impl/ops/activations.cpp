// Pointwise activations (sigmoid, tanh, relu, abs, clamp, exp, log, sqrt, sin, cos) with their in-place and out=
// forms. Each is one description (dtype rules, kernel, derivative, what the derivative saves) shared by every
// form, so the out-of-place, in-place and out= variants cannot drift apart.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

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
using ops::make_node;
using ops::UnaryOp;

namespace {

// Who handles the result dtype. TensorIterator: an in-place form's cast check comes after its overlap checks,
// naming types as ScalarType ("Long"), and it converts an input of another dtype on the CPU only (a device's
// kernels cast as they read). clamp's meta function: it checks before, naming types as TypeMeta ("long int"),
// and converts the input with .to() on every device.
enum class CastCheck { Iterator, ClampMeta };

struct Activation {
  // Its node; what the derivative reads is the one tensor the node saves (impl/autograd/derivatives.def): the
  // input, or the op's own result (then writing the result in place before backward is a version error).
  Derivative node;
  CastCheck cast_check;
  // Checks made before any iteration is set up; returns the dtype the op computes in.
  std::function<ScalarType(const Tensor& x)> result_type;
  // Writes op(x) into out (both of the result dtype); raises the kernel's own dtype errors first.
  std::function<void(const Tensor& out, const Tensor& x)> kernel;
  // The input's gradient, from the output's gradient and the saved tensor.
  std::function<Tensor(const Tensor& grad, const Tensor& saved)> derivative;
  // The dtypes its out= form (exp.out, abs.out) writes into.
  ops::OutDtype out_dtype = ops::OutDtype::CastSafely;

  bool saves_result() const { return autograd::derivative(node).saved.at(0) == "result"; }
};

// A fresh output laid out as TensorIterator lays out a unary op's result.
Tensor unary_output(const Tensor& x, ScalarType t) {
  return Tensor::allocate_uninitialized(ops::elementwise_layout(x.sizes(), {&x.layout()}), t, x.device());
}

Tensor unary_values(UnaryOp op, const Tensor& x) {
  Tensor out = unary_output(x, x.dtype());
  ops::unary_kernel(op, out, x);
  return out;
}

// Unary float ops: integer and bool inputs are computed in the default float type.
ScalarType floating_result(const Tensor& x) { return is_floating(x.dtype()) ? x.dtype() : kDefaultFloat; }

// sigmoid_backward(grad_output, output) and tanh_backward: ATen ops of their own, one TensorIterator over
// (grad, result) (its layout rules, grad first), differentiable in turn (SigmoidBackwardBackward0,
// TanhBackwardBackward0), so that a create_graph backward records them. derivatives.yaml's formulas, op for op:
//   sigmoid: grad_output: sigmoid_backward(grad, output); output: grad * grad_output * (-2 * output + 1)
//   tanh:    grad_output: tanh_backward(grad, output);    output: grad * (-2 * output * grad_output)
// Both are saved whichever gradient is needed: PyTorch's codegen guards no saved tensor of a *_backward op
// (gen_variable_type.py's guard_for), so a second backward without retain_graph finds them freed. Output first:
// the member order of 1.13's generated node, which is the order it unpacks them in (2.x unpacks by name).
Tensor result_backward(ops::ResultBackward op, const Tensor& g, const Tensor& r) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&g, &r})) {
    const bool sigmoid = op == ops::ResultBackward::Sigmoid;
    node = make_node(sigmoid ? Derivative::SigmoidBackwardBackward0 : Derivative::TanhBackwardBackward0, {&g, &r},
                     [op, sigmoid](const Tensor& gg, const TensorList& s, const Formula& n) {
                       const Tensor& output = s[0];
                       const Tensor& grad_output = s[1];
                       TensorList out(2);
                       if (n.task_should_compute_output(0)) out[0] = result_backward(op, gg, output);
                       if (n.task_should_compute_output(1)) {
                         const Tensor minus_2_output = mul(output, Scalar::of_int(-2));
                         out[1] = sigmoid ? mul(mul(gg, grad_output), add(minus_2_output, Scalar::of_int(1)))
                                          : mul(gg, mul(minus_2_output, grad_output));
                       }
                       return out;
                     });
    node->save("output", r);
    node->save("grad_output", g);
  }
  const Device d = ops::common_device(nullptr, {&g, &r}, /*allow_cpu_scalars=*/false);
  Tensor out = Tensor::allocate_uninitialized(ops::elementwise_layout(g.sizes(), {&g.layout(), &r.layout()}), g.dtype(), d);
  ops::result_backward_kernel(op, out, g, r);
  if (node) autograd::set_history(out, node);
  return out;
}

// threshold_backward(grad_output, self, threshold), relu's derivative: zero where self <= threshold (a NaN self
// passes the gradient); its TensorIterator takes self before the gradient. Differentiable in turn
// (ThresholdBackwardBackward0): grad_output: threshold_backward(grad, self, threshold), self: zeros_like(grad);
// self is saved even when only self's gradient is needed (no guard on a *_backward op's saved tensors).
Tensor threshold_backward(const Tensor& g, const Tensor& self, double threshold) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&g, &self})) {
    node = make_node(Derivative::ThresholdBackwardBackward0, {&g, &self},
                     [threshold](const Tensor& gg, const TensorList& s, const Formula& n) {
                       TensorList out(2);
                       if (n.task_should_compute_output(0)) out[0] = threshold_backward(gg, s[0], threshold);
                       if (n.task_should_compute_output(1)) out[1] = zeros_like(gg);
                       return out;
                     });
    node->save("self", self);
  }
  const Device d = ops::common_device(nullptr, {&self, &g}, /*allow_cpu_scalars=*/false);
  Tensor out = Tensor::allocate_uninitialized(ops::elementwise_layout(g.sizes(), {&self.layout(), &g.layout()}), g.dtype(), d);
  ops::threshold_backward_kernel(out, g, self, threshold);
  if (node) autograd::set_history(out, node);
  return out;
}

// sgn: abs's derivative multiplies by it. Its own derivative (SgnBackward0, saving self and the result) is
// sgn_backward: ((grad - sgn * sgn * grad) / |self|).masked_fill_(|self| == 0, 0), zero for a real self.
Tensor sgn(const Tensor& x) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x}))
    node = make_node(Derivative::SgnBackward0, {&x}, [](const Tensor& g, const TensorList& s, const Formula&) {
      const Tensor& self = s[0];
      const Tensor& result = s[1];
      const Tensor magnitude = abs(self);
      const Tensor r = div(sub(g, mul(mul(result, result), g)), magnitude);
      return TensorList{masked_fill_(r, eq(magnitude, zeros({}, magnitude.dtype())), Scalar::of_int(0))};
    });
  if (node) node->save("self", x);
  Tensor out = unary_values(UnaryOp::Sign, x);
  if (node) {
    autograd::set_history(out, node);
    node->save("result", out, /*is_output=*/true);
  }
  return out;
}

// A unary op computed in floating point by the kernel `fn` (impl/kernels/pointwise.h: ATen's scalar loops, in the
// element type), with the derivative `d` of what it saves. `kernel` is the name ATen's CPU kernel dispatches
// under, which leaves out Half.
Activation float_unary(UnaryOp fn, Derivative node, const char* kernel,
                       std::function<Tensor(const Tensor&, const Tensor&)> d) {
  auto run = [fn, kernel](const Tensor& out, const Tensor& x) {
    ops::check_dispatch(out.device(), {kernel, {ScalarType::Float16}, "", {}}, out.dtype());
    ops::unary_kernel(fn, out, x);
  };
  return {node, CastCheck::Iterator, floating_result, run, std::move(d)};
}

const Activation& sigmoid_op() {
  static const Activation op = float_unary(UnaryOp::Sigmoid, Derivative::SigmoidBackward0, "sigmoid_cpu", [](const Tensor& g, const Tensor& r) {
    return result_backward(ops::ResultBackward::Sigmoid, g, r);
  });
  return op;
}

const Activation& tanh_op() {
  static const Activation op = float_unary(UnaryOp::Tanh, Derivative::TanhBackward0, "tanh_vml_cpu", [](const Tensor& g, const Tensor& r) {
    return result_backward(ops::ResultBackward::Tanh, g, r);
  });
  return op;
}

const Activation& exp_op() {
  static const Activation op =
      float_unary(UnaryOp::Exp, Derivative::ExpBackward0, "exp_vml_cpu", [](const Tensor& g, const Tensor& r) { return mul(g, r); });
  return op;
}

// derivatives.yaml: log's gradient is grad.div(self), so log saves its input (log_ a clone of it).
const Activation& log_op() {
  static const Activation op =
      float_unary(UnaryOp::Log, Derivative::LogBackward0, "log_vml_cpu", [](const Tensor& g, const Tensor& self) { return div(g, self); });
  return op;
}

// derivatives.yaml: sqrt's gradient is grad / (2 * result), so sqrt saves its result.
const Activation& sqrt_op() {
  static const Activation op = float_unary(UnaryOp::Sqrt, Derivative::SqrtBackward0, "sqrt_vml_cpu", [](const Tensor& g, const Tensor& r) {
    return div(g, mul(r, Scalar::of_int(2)));
  });
  return op;
}

// derivatives.yaml: sin's gradient is grad * self.cos() and cos's grad * -self.sin(), so each saves its input
// (its in-place form a clone of it) and calls the other op, which a create_graph backward records.
const Activation& sin_op() {
  static const Activation op = float_unary(UnaryOp::Sin, Derivative::SinBackward0, "sin_vml_cpu",
                                           [](const Tensor& g, const Tensor& self) { return mul(g, cos(self)); });
  return op;
}

const Activation& cos_op() {
  static const Activation op = float_unary(UnaryOp::Cos, Derivative::CosBackward0, "cos_vml_cpu",
                                           [](const Tensor& g, const Tensor& self) { return mul(g, neg(sin(self))); });
  return op;
}

const Activation& relu_op() {
  // LibTorch's relu is clamp_min(x, 0) after its own bool check; its derivative is threshold_backward(grad,
  // result, 0): zero where the result is <= 0 (a NaN result passes the gradient).
  static const Activation op{
      Derivative::ReluBackward0, CastCheck::Iterator,
      [](const Tensor& x) {
        if (x.dtype() == ScalarType::Bool)
          fail(ErrorKind::DType, "Boolean inputs not supported for relu", dtype_refusal_class());
        return x.dtype();
      },
      [](const Tensor& out, const Tensor& x) {
        ops::check_dispatch(out.device(), {"clamp_min_cpu", {ScalarType::Float16}, "", {}}, out.dtype());
        ops::clamp_kernel(out, x, 0.0, std::nullopt);
      },
      [](const Tensor& g, const Tensor& r) { return threshold_backward(g, r, 0); }};
  return op;
}

const Activation& abs_op() {
  // abs's derivative is grad * self.sgn().
  static const Activation op{
      Derivative::AbsBackward0, CastCheck::Iterator, [](const Tensor& x) { return x.dtype(); },
      [](const Tensor& out, const Tensor& x) {
        ops::check_dispatch(out.device(), {"abs_cpu", {ScalarType::Bool}, "", {}}, x.dtype());  // CUDA's takes Bool
        ops::unary_kernel(UnaryOp::Abs, out, x);
      },
      [](const Tensor& g, const Tensor& self) { return mul(g, sgn(self)); }, ops::OutDtype::MustMatch};
  return op;
}

// 2.x's clamp of an integral tensor: a min above the dtype's largest value, or a max below its lowest, leaves
// nothing to clamp into and is refused; a bound beyond the other end is clamped to the dtype's range.
void clamp_integral_bounds(std::optional<double>& lo, std::optional<double>& hi, ScalarType t) {
  const double lowest = t == ScalarType::Int32 ? -2147483648.0 : -9223372036854775808.0;
  const double largest = t == ScalarType::Int32 ? 2147483647.0 : 9223372036854775807.0;
  auto refuse = [t](const char* which, double v) {
    std::ostringstream s;  // as ATen streams a double: six significant digits
    s << "Clamp " << which << " value " << v << " is outside the representable range of " << type_name(t);
    return s.str();
  };
  if (lo) PARITY_CHECK(*lo <= largest, ErrorKind::Argument, refuse("min", *lo));
  if (hi) PARITY_CHECK(*hi >= lowest, ErrorKind::Argument, refuse("max", *hi));
  if (lo) lo = std::max(*lo, lowest);
  if (hi) hi = std::min(*hi, largest);
}

// clamp with scalar bounds (ClampBackward1). The bounds take part in type promotion as wrapped numbers, so a
// bool tensor with int bounds gives int64 and an int64 tensor with float bounds float32.
Activation clamp_op(std::optional<Scalar> min, std::optional<Scalar> max) {
  std::optional<double> lo, hi;
  if (min) lo = min->value;
  if (max) hi = max->value;
  auto result_type = [min, max](const Tensor& x) {
    PARITY_CHECK(min || max, ErrorKind::Argument, "torch.clamp: At least one of 'min' or 'max' must not be None");
    if (is_floating(x.dtype())) return x.dtype();
    ops::Operand self{x, false}, lo_op, hi_op;
    if (min) lo_op = {ops::wrap_scalar(*min), true};
    if (max) hi_op = {ops::wrap_scalar(*max), true};
    if (min && max) return ops::result_type({&self, &lo_op, &hi_op});
    return ops::result_type({&self, min ? &lo_op : &hi_op});
  };
  auto kernel = [lo, hi](const Tensor& out, const Tensor& x) {
    // With both bounds (2.x: with either), a NaN bound makes the whole result NaN without converting the bounds.
    const bool nan_bound = (lo && std::isnan(*lo)) || (hi && std::isnan(*hi));
    if (nan_bound && ((lo && hi) || follows(VersionGate::ClampNanBoundIsNan))) {
      ops::fill_kernel(out, std::numeric_limits<double>::quiet_NaN());
      return;
    }
    const char* min_name = follows(VersionGate::ClampMinScalarKernelName) ? "clamp_min_scalar_cpu" : "clamp_min_cpu";
    const char* name = lo && hi ? "clamp_scalar_cpu" : lo ? min_name : "clamp_max_scalar_cpu";
    // ATen's cuda kernels of the three forms share one dispatch (launch_clamp_scalar), in 1.13 as in 2.x.
    ops::check_dispatch(out.device(),
                        {name, {ScalarType::Bool, ScalarType::Float16}, "clamp_scalar_cuda", {ScalarType::Bool}},
                        out.dtype());
    if (is_integral(out.dtype(), false) && follows(VersionGate::ClampIntegralBoundRange)) {
      std::optional<double> in_range_lo = lo, in_range_hi = hi;
      clamp_integral_bounds(in_range_lo, in_range_hi, out.dtype());
      ops::clamp_kernel(out, x, in_range_lo, in_range_hi);
      return;
    }
    if (lo) ops::check_scalar_fits(*lo, out.dtype());
    if (hi) ops::check_scalar_fits(*hi, out.dtype());
    ops::clamp_kernel(out, x, lo, hi);
  };
  // clamp_backward: the gradient passes where min <= self <= max, bounds included (2.x: excluded, min < self <
  // max). LibTorch computes it as where(self >= min [& self <= max], grad, zero): the mask comes from comparisons
  // with a 0-dim tensor and `where` iterates (mask, grad, zero), so neither takes TensorIterator's same-shape fast
  // path.
  // The saved self is read as it is when unpacked: set_data may have given it another dtype (compared here in the
  // gradient's, which holds every bound parity draws exactly) or another shape, broadcast with the gradient as
  // `where` broadcasts (raising where it cannot; a larger result is then refused by the engine).
  auto derivative = [lo, hi](const Tensor& g, const Tensor& saved) {
    const Tensor self = saved.dtype() == g.dtype() ? saved : to(saved, g.dtype());
    const Layout zero = Layout::dense({});
    Tensor mask = Tensor::allocate_uninitialized(ops::elementwise_layout(self.sizes(), {&self.layout(), &zero}),
                                                 ScalarType::Bool, self.device());
    ops::clamp_mask_kernel(mask, self, lo, hi, !follows(VersionGate::ClampBackwardExcludesBounds));
    return where(mask, g, zeros({}, g.dtype()));
  };
  return {Derivative::ClampBackward1, CastCheck::ClampMeta, result_type, kernel, derivative};
}

Rc<Formula> activation_node(const Activation& a, const Tensor& x) {
  return make_node(a.node, {&x}, [d = a.derivative](const Tensor& g, const TensorList& s, const Formula&) {
    return TensorList{d(g, s[0])};
  });
}

// As in PyTorch's generated code: the node (saving self) exists before the kernel runs, the result is saved
// after it.
Tensor apply(const Activation& a, const Tensor& x) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&x})) {
    node = activation_node(a, x);
    if (!a.saves_result()) node->save("self", x);
  }
  ScalarType t = a.result_type(x);
  // The converted copy's layout decides the output's, where there is one (CastCheck): the input's own on a device
  // whose TensorIterator converts nothing.
  Tensor cx = to(x, t);
  Tensor out = unary_output(a.cast_check == CastCheck::ClampMeta || x.device().type == DeviceType::CPU ? cx : x, t);
  a.kernel(out, cx);
  if (node) {
    autograd::set_history(out, node);
    if (a.saves_result()) node->save("result", out, /*is_output=*/true);
  }
  return out;
}

Tensor apply_(const Activation& a, const Tensor& self) {
  bool rg = autograd::compute_requires_grad({&self});
  autograd::check_inplace(self, rg);
  Rc<Formula> node;
  if (rg) {
    node = activation_node(a, self);
    // A derivative reading self needs its value from before the write: PyTorch saves self.clone().
    if (!a.saves_result()) node->save("self", clone(self));
  }
  ScalarType t = a.result_type(self);
  // Every activation's result dtype either is self's or cannot be cast back to it (float into int, int into
  // bool), so a differing dtype is always an error.
  auto cast_message = [&](std::string_view out_name) {
    return "result type " + std::string(type_name(t)) + " can't be cast to the desired output type " +
           std::string(out_name);
  };
  if (a.cast_check == CastCheck::ClampMeta)
    PARITY_CHECK(t == self.dtype(), ErrorKind::DType, cast_message(type_meta_name(self.dtype())));
  ops::check_no_overlap(self, {});
  PARITY_CHECK(t == self.dtype(), ErrorKind::DType, cast_message(type_name(self.dtype())));
  a.kernel(self, self);
  self.bump_version();
  if (node) {
    autograd::rebase_history(self, node);
    if (a.saves_result()) node->save("result", self, /*is_output=*/true);
  }
  return self;
}

// The out= form (at::exp_out(out, self)), in the order of VariableType, the meta function and TensorIterator: the
// refusal of tensors requiring grad, the op's own dtype checks, out's overlaps and device, the dtype out may have;
// then out is resized, written and its version bumped once. Nothing is recorded: out= forms have no history.
Tensor apply_out(const Activation& a, std::string_view name, const Tensor& out, const Tensor& x) {
  ops::refuse_out_requiring_grad(name, {&x}, out);
  const ScalarType t = a.result_type(x);
  ops::check_no_overlap(out, {&x});
  ops::common_device(&out, {&x}, /*allow_cpu_scalars=*/false);
  ops::check_out_dtype(out, t, a.out_dtype);
  const Tensor cx = to(x, t);
  ops::resize_output(out, x.sizes(), ops::elementwise_layout(x.sizes(), {&ops::iterator_input_layout(cx, x)}));
  ops::write_result(out, t, [&](const Tensor& into) { a.kernel(into, cx); });
  out.bump_version();
  return out;
}

}  // namespace

Tensor exp(const Tensor& x) { return apply(exp_op(), x); }
Tensor sigmoid(const Tensor& x) { return apply(sigmoid_op(), x); }
Tensor tanh(const Tensor& x) { return apply(tanh_op(), x); }
Tensor log(const Tensor& x) { return apply(log_op(), x); }
Tensor sqrt(const Tensor& x) { return apply(sqrt_op(), x); }
Tensor relu(const Tensor& x) { return apply(relu_op(), x); }
Tensor abs(const Tensor& x) { return apply(abs_op(), x); }
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return apply(clamp_op(min, max), x);
}

Tensor sigmoid_(const Tensor& self) { return apply_(sigmoid_op(), self); }
Tensor tanh_(const Tensor& self) { return apply_(tanh_op(), self); }
Tensor log_(const Tensor& self) { return apply_(log_op(), self); }
Tensor sqrt_(const Tensor& self) { return apply_(sqrt_op(), self); }
Tensor sin(const Tensor& x) { return apply(sin_op(), x); }
Tensor sin_(const Tensor& self) { return apply_(sin_op(), self); }
Tensor cos(const Tensor& x) { return apply(cos_op(), x); }
Tensor cos_(const Tensor& self) { return apply_(cos_op(), self); }
Tensor relu_(const Tensor& self) { return apply_(relu_op(), self); }
Tensor abs_(const Tensor& self) { return apply_(abs_op(), self); }
Tensor exp_(const Tensor& self) { return apply_(exp_op(), self); }
Tensor clamp_(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  return apply_(clamp_op(min, max), self);
}

Tensor exp_out(const Tensor& out, const Tensor& x) { return apply_out(exp_op(), "exp", out, x); }
Tensor sigmoid_out(const Tensor& out, const Tensor& x) { return apply_out(sigmoid_op(), "sigmoid", out, x); }
Tensor tanh_out(const Tensor& out, const Tensor& x) { return apply_out(tanh_op(), "tanh", out, x); }
Tensor log_out(const Tensor& out, const Tensor& x) { return apply_out(log_op(), "log", out, x); }
Tensor sqrt_out(const Tensor& out, const Tensor& x) { return apply_out(sqrt_op(), "sqrt", out, x); }
Tensor sin_out(const Tensor& out, const Tensor& x) { return apply_out(sin_op(), "sin", out, x); }
Tensor cos_out(const Tensor& out, const Tensor& x) { return apply_out(cos_op(), "cos", out, x); }
Tensor abs_out(const Tensor& out, const Tensor& x) { return apply_out(abs_op(), "abs", out, x); }

}  // namespace parity::impl
