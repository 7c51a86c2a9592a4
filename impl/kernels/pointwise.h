// impl's pointwise kernels, written once for both devices: each is a functor of one element type whose
// operator() maps the inputs' elements at one index to the output's (its parameter and return types say which
// operand has which type), and run_pointwise picks the functor a call names and hands it to an executor. The CPU
// executor (impl/cpu/executor.h) and the CUDA launcher (impl/cuda/pointwise.cu) are the only two; each applies
// the functor at every index of the call's geometry. Element semantics follow ATen's scalar CPU loops (how each
// rounds, wraps and treats NaN is said at each functor); the ops above decide dtypes, layouts and errors.
#pragma once
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "impl/kernels/geometry.h"
#include "impl/kernels/host_device.h"
#include "impl/scalar_type.h"

namespace parity::impl::kernels {

enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div };
enum class CompareOp : std::uint8_t { Eq, Ne };
enum class UnaryOp : std::uint8_t { Neg, Abs, Sign, Exp, Sigmoid, Tanh, Log, Sqrt, Sin, Cos };
enum class ResultBackward : std::uint8_t { Sigmoid, Tanh };

// What a call computes; the operands' order in PointwiseCall::data is the output's, then the inputs' as listed.
enum class Pointwise : std::uint8_t {
  Copy,               // out (dtype) = in (src_dtype), converted as ATen's copy converts
  Fill,               // out = a
  Binary,             // out = a op b
  Compare,            // out (bool) = a op b, inputs of dtype
  Unary,              // out = op(x)
  Pow,                // out = x ** a
  Clamp,              // out = min(max(x, a), b); a bound applies when has_a / has_b
  ClampMask,          // out (bool) = x within [a, b] (flag: bounds included), x of dtype
  ResultBackward,     // out = sigmoid_backward / tanh_backward (grad, result)
  ThresholdBackward,  // out = x <= a ? 0 : grad; inputs grad, x
  Where,              // out = condition (bool) ? a : b
  MaskedFill,         // out = mask (bool) ? a : out; inputs mask, out itself
  Addcmul,            // out = self + a * t1 * t2
};

struct PointwiseCall {
  Pointwise kind = Pointwise::Copy;
  BinaryOp binary = BinaryOp::Add;
  CompareOp compare = CompareOp::Eq;
  UnaryOp unary = UnaryOp::Neg;
  ResultBackward result_backward = ResultBackward::Sigmoid;
  ScalarType dtype = ScalarType::Float32;      // the element type the functor computes in
  ScalarType src_dtype = ScalarType::Float32;  // Copy's input
  double a = 0, b = 0;
  bool has_a = false, has_b = false, flag = false;
  // The output is on cuda: Pow, ResultBackward and Addcmul then compute as ATen's cuda kernels do, where those
  // are not its CPU kernels' arithmetic.
  bool cuda = false;
  Geometry geometry;
  void* data[kMaxOperands] = {};  // element 0 of each operand (offsets applied)
};

inline namespace PARITY_KERNEL_ISA {

// The operand types of a pointwise functor, read off its operator(): the output's (Out), the inputs' (In, a tuple).
// Both executors and the tests read it, so that a functor's signature is its only statement of operand types.
template <typename M>
struct FunctorSignature;
template <typename C, typename R, typename... A>
struct FunctorSignature<R (C::*)(A...) const> {
  using Out = R;
  using In = std::tuple<std::remove_cv_t<std::remove_reference_t<A>>...>;
};
template <typename F>
using SignatureOf = FunctorSignature<decltype(&F::operator())>;

// A scalar argument as an element of T: nonzero is true for bool, truncation toward zero for integers.
template <typename T>
PARITY_HOST_DEVICE T element(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else return static_cast<T>(v);
}

// Math of a floating op on an element: 16-bit types compute in float, integers (never reached: the ops compute
// them in a floating type) in double so that every instantiation compiles for the device.
template <typename T>
using MathType = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>,
                                    float, double>;

template <typename D, typename S>
struct CopyFn {
  PARITY_HOST_DEVICE D operator()(S s) const {
    if constexpr (std::is_same_v<D, bool>) return s != S(0);
    else if constexpr (std::is_same_v<D, S>) return s;
    else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) return D(static_cast<float>(s));
    else return static_cast<D>(s);
  }
};

template <typename T>
struct FillFn {
  T value;
  PARITY_HOST_DEVICE T operator()() const { return value; }
};

template <typename T, BinaryOp Op>
struct BinaryFn {
  PARITY_HOST_DEVICE T operator()(T p, T q) const {
    if constexpr (std::is_same_v<T, bool>) {
      return Op == BinaryOp::Mul ? (p && q) : (p || q);
    } else if constexpr (std::is_integral_v<T> && Op != BinaryOp::Div) {
      // Integers wrap, as ATen's kernels do on two's-complement machines; signed overflow is undefined in C++, so
      // they compute in the unsigned type of their width (the same low bits).
      using U = std::make_unsigned_t<T>;
      const U a = static_cast<U>(p), b = static_cast<U>(q);
      return static_cast<T>(Op == BinaryOp::Add ? U(a + b) : Op == BinaryOp::Sub ? U(a - b) : U(a * b));
    } else if constexpr (Op == BinaryOp::Add) {
      return static_cast<T>(p + q);
    } else if constexpr (Op == BinaryOp::Sub) {
      return static_cast<T>(p - q);
    } else if constexpr (Op == BinaryOp::Mul) {
      return static_cast<T>(p * q);
    } else if constexpr (is_floating_v<T>) {
      return static_cast<T>(p / q);  // true division: the ops give it a floating output
    } else {
      return p;  // integral Div: run_pointwise refuses it before any element is computed
    }
  }
};

template <typename T, CompareOp Op>
struct CompareFn {
  // NaN equals nothing, itself included.
  PARITY_HOST_DEVICE bool operator()(T p, T q) const { return Op == CompareOp::Eq ? p == q : !(p == q); }
};

template <typename T, UnaryOp Op>
struct UnaryFn {
  PARITY_HOST_DEVICE T operator()(T v) const {
    if constexpr (std::is_same_v<T, bool>) {
      return v;  // the ops reject bool inputs or compute them in a floating type
    } else if constexpr (Op == UnaryOp::Neg) {
      // -INT_MIN wraps to itself, as abs below.
      if constexpr (std::is_integral_v<T>) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(v));
      else return static_cast<T>(-v);
    } else if constexpr (Op == UnaryOp::Abs) {
      // Integers wrap as in ATen: abs(INT64_MIN) is INT64_MIN (negated through unsigned to avoid overflow).
      if constexpr (std::is_integral_v<T>) return v < 0 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(v)) : v;
      else return static_cast<T>(std::fabs(static_cast<MathType<T>>(v)));
    } else if constexpr (Op == UnaryOp::Sign) {
      return static_cast<T>((T(0) < v) - (v < T(0)));  // NaN and zeros give 0
    } else {
      // ATen's scalar loops, in the element type (a 16-bit type in float, rounded once).
      const MathType<T> x = static_cast<MathType<T>>(v);
      if constexpr (Op == UnaryOp::Exp) return static_cast<T>(std::exp(x));
      else if constexpr (Op == UnaryOp::Sigmoid) return static_cast<T>(MathType<T>(1) / (MathType<T>(1) + std::exp(-x)));
      else if constexpr (Op == UnaryOp::Tanh) return static_cast<T>(std::tanh(x));
      else if constexpr (Op == UnaryOp::Log) return static_cast<T>(std::log(x));
      else if constexpr (Op == UnaryOp::Sin) return static_cast<T>(std::sin(x));
      else if constexpr (Op == UnaryOp::Cos) return static_cast<T>(std::cos(x));
      else return static_cast<T>(std::sqrt(x));
    }
  }
};

// Square-and-multiply in the unsigned type of T's width: the products wrap as BinaryFn's do.
template <typename T>
PARITY_HOST_DEVICE T int_pow(T base, std::int64_t e) {
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  while (e > 0) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
struct PowFn {
  double e;
  bool cuda;
  PARITY_HOST_DEVICE T operator()(T v) const {
    if constexpr (std::is_same_v<T, bool>) {
      return v;
    } else if constexpr (std::is_integral_v<T>) {
      return int_pow<T>(v, static_cast<std::int64_t>(e));
    } else if (std::is_same_v<T, Half> && !cuda) {
      // The CPU's Half pow is std::pow with the exponent as a Half, no special exponents: pow(-0, -0.5) is +inf
      // there, where the others' 1 / sqrt(-0) is -inf. ATen's cuda kernel takes the special exponents for Half too.
      return static_cast<T>(std::pow(static_cast<float>(v), static_cast<float>(T(e))));
    } else {
      // The special exponents PyTorch's pow kernel computes without std::pow (pow_tensor_scalar_optimized_kernel:
      // products in the element type, so each rounds in bfloat16; -2 divides a double 1 by the product). The
      // CPU's bfloat16 -0.5 also depends on where an element falls in the vectorised loop: impl/cpu handles it.
      using M = MathType<T>;
      auto mul = [](T a, T b) { return static_cast<T>(a * b); };
      if (e == 2) return mul(v, v);
      if (e == 3) return mul(mul(v, v), v);
      if (e == 0.5) return static_cast<T>(std::sqrt(static_cast<M>(v)));
      if (e == -0.5) return static_cast<T>(T(1) / std::sqrt(static_cast<M>(v)));
      if (e == -1) return static_cast<T>(T(1) / v);
      if (e == -2) return static_cast<T>(1.0 / static_cast<double>(mul(v, v)));
      return static_cast<T>(std::pow(static_cast<M>(v), static_cast<M>(static_cast<T>(e))));
    }
  }
};

template <typename T>
struct ClampFn {
  T lo, hi;
  bool has_lo, has_hi;
  // max(v, lo) keeps v when either is NaN, as ATen's scalar loop (and its vectorised one) does.
  PARITY_HOST_DEVICE T operator()(T v) const {
    if (has_lo) v = v < lo ? lo : v;
    if (has_hi) v = hi < v ? hi : v;
    return v;
  }
};

template <typename T>
struct ClampMaskFn {
  T lo, hi;
  bool has_lo, has_hi, bounds_included;
  PARITY_HOST_DEVICE bool operator()(T v) const {
    return bounds_included ? (!has_lo || v >= lo) && (!has_hi || v <= hi) : (!has_lo || v > lo) && (!has_hi || v < hi);
  }
};

template <typename T, ResultBackward Op>
struct ResultBackwardFn {
  // grad * (1 - y) * y and grad * (1 - y * y), rounded once; but sigmoid's float16 kernel computes in c10::Half,
  // rounding after each operation (as 2.15 does; 1.13 has no float16 sigmoid on the CPU to differentiate).
  // tanh's 1 - y * y is one fused multiply-add in LibTorch: the compilers contract ATen's `1 - b * b` (GCC for
  // its AVX2 kernels, nvcc by default), and near saturation, where 1 - y * y cancels, rounding y * y first
  // moves the gradient by up to half an ulp of 1, many ulps of the result. ATen's cuda tanh_backward computes
  // the 16-bit types in their own type, each operation rounded, so there is nothing to contract.
  bool cuda;
  PARITY_HOST_DEVICE T operator()(T g, T y) const {
    if constexpr (std::is_same_v<T, bool>) return g;  // sigmoid and tanh results are floating
    else if constexpr (std::is_same_v<T, Half> && Op == ResultBackward::Sigmoid) return T(T(g * T(T(1) - y)) * y);
    else if constexpr (Op == ResultBackward::Sigmoid) return static_cast<T>(g * (T(1) - y) * y);
    else if ((std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) && cuda) return T(g * T(T(1) - T(y * y)));
    else {
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;  // the 16-bit types compute in float
      const C yc = static_cast<C>(y);
      return static_cast<T>(static_cast<C>(g) * std::fma(-yc, yc, C(1)));
    }
  }
};

template <typename T>
struct ThresholdBackwardFn {
  T threshold;
  PARITY_HOST_DEVICE T operator()(T g, T v) const { return v <= threshold ? T(0) : g; }
};

template <typename T>
struct WhereFn {
  PARITY_HOST_DEVICE T operator()(bool c, T p, T q) const { return c ? p : q; }
};

template <typename T>
struct MaskedFillFn {
  T value;
  PARITY_HOST_DEVICE T operator()(bool m, T old) const { return m ? value : old; }
};

template <typename T>
struct AddcmulFn {
  // Integers compute in unsigned arithmetic: two's-complement wrap-around, as ATen's int64 kernels. The 16-bit
  // floats compute in float with the value as a float (addcmul_cpu_kernel's float_val): 3.4e38 times a bfloat16
  // product is no infinity there.
  // On the CPU the floating types add the last product fused, self + (value * t1) * t2 rounded twice, not three
  // times: LibTorch 1.13 and 2.15 alike, every element (vector body and scalar tail), float, double and the
  // 16-bit types in float. The compilers contract addcmul_cpu_kernel's `self + value * t1 * t2` (GCC for its
  // AVX2/AVX-512 kernels). Where the product cancels self it shows whole: 2^31-1 times itself, subtracted from
  // its own rounded square, is -1 fused and 0 unfused. impl's cuda keeps the unfused form until a device run
  // judges LibTorch-CUDA's (issue 30).
  static constexpr bool kReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
  using A = typename std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, std::make_unsigned<T>,
                                        std::conditional<kReduced, float, T>>::type;
  A value;
  bool cuda;
  PARITY_HOST_DEVICE T operator()(T a, T b, T c) const {
    if constexpr (std::is_same_v<T, bool>) return a;  // the op refuses bool before any kernel
    else if constexpr (std::is_floating_point_v<A>) {
      if (!cuda) return static_cast<T>(std::fma(value * static_cast<A>(b), static_cast<A>(c), static_cast<A>(a)));
    }
    return static_cast<T>(static_cast<A>(a) + value * static_cast<A>(b) * static_cast<A>(c));
  }
};

// Calls exec(call, functor) with the functor `call` names, for its element type(s). Host code: both executors'
// entry points are this one function instantiated with their executor.
template <typename Exec>
void run_pointwise(Exec& exec, const PointwiseCall& c) {
  switch (c.kind) {
    case Pointwise::Copy:
      return dispatch(c.dtype, [&](auto d) {
        dispatch(c.src_dtype, [&](auto s) { exec(c, CopyFn<decltype(d), decltype(s)>{}); });
      });
    case Pointwise::Fill:
      return dispatch(c.dtype, [&](auto t) { exec(c, FillFn<decltype(t)>{element<decltype(t)>(c.a)}); });
    case Pointwise::Binary:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        switch (c.binary) {
          case BinaryOp::Add: return exec(c, BinaryFn<T, BinaryOp::Add>{});
          case BinaryOp::Sub: return exec(c, BinaryFn<T, BinaryOp::Sub>{});
          case BinaryOp::Mul: return exec(c, BinaryFn<T, BinaryOp::Mul>{});
          case BinaryOp::Div: return exec(c, BinaryFn<T, BinaryOp::Div>{});
        }
      });
    case Pointwise::Compare:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        switch (c.compare) {
          case CompareOp::Eq: return exec(c, CompareFn<T, CompareOp::Eq>{});
          case CompareOp::Ne: return exec(c, CompareFn<T, CompareOp::Ne>{});
        }
      });
    case Pointwise::Unary:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        switch (c.unary) {
          case UnaryOp::Neg: return exec(c, UnaryFn<T, UnaryOp::Neg>{});
          case UnaryOp::Abs: return exec(c, UnaryFn<T, UnaryOp::Abs>{});
          case UnaryOp::Sign: return exec(c, UnaryFn<T, UnaryOp::Sign>{});
          case UnaryOp::Exp: return exec(c, UnaryFn<T, UnaryOp::Exp>{});
          case UnaryOp::Sigmoid: return exec(c, UnaryFn<T, UnaryOp::Sigmoid>{});
          case UnaryOp::Tanh: return exec(c, UnaryFn<T, UnaryOp::Tanh>{});
          case UnaryOp::Log: return exec(c, UnaryFn<T, UnaryOp::Log>{});
          case UnaryOp::Sqrt: return exec(c, UnaryFn<T, UnaryOp::Sqrt>{});
          case UnaryOp::Sin: return exec(c, UnaryFn<T, UnaryOp::Sin>{});
          case UnaryOp::Cos: return exec(c, UnaryFn<T, UnaryOp::Cos>{});
        }
      });
    case Pointwise::Pow:
      return dispatch(c.dtype, [&](auto t) { exec(c, PowFn<decltype(t)>{c.a, c.cuda}); });
    case Pointwise::Clamp:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        exec(c, ClampFn<T>{element<T>(c.a), element<T>(c.b), c.has_a, c.has_b});
      });
    case Pointwise::ClampMask:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        exec(c, ClampMaskFn<T>{element<T>(c.a), element<T>(c.b), c.has_a, c.has_b, c.flag});
      });
    case Pointwise::ResultBackward:
      return dispatch(c.dtype, [&](auto t) {
        using T = decltype(t);
        switch (c.result_backward) {
          case ResultBackward::Sigmoid: return exec(c, ResultBackwardFn<T, ResultBackward::Sigmoid>{c.cuda});
          case ResultBackward::Tanh: return exec(c, ResultBackwardFn<T, ResultBackward::Tanh>{c.cuda});
        }
      });
    case Pointwise::ThresholdBackward:
      return dispatch(c.dtype, [&](auto t) { exec(c, ThresholdBackwardFn<decltype(t)>{element<decltype(t)>(c.a)}); });
    case Pointwise::Where:
      return dispatch(c.dtype, [&](auto t) { exec(c, WhereFn<decltype(t)>{}); });
    case Pointwise::MaskedFill:
      return dispatch(c.dtype, [&](auto t) { exec(c, MaskedFillFn<decltype(t)>{element<decltype(t)>(c.a)}); });
    case Pointwise::Addcmul:
      return dispatch(c.dtype, [&](auto t) {
        using F = AddcmulFn<decltype(t)>;
        if constexpr (F::kReduced) exec(c, F{static_cast<float>(c.a), c.cuda});
        else exec(c, F{static_cast<typename F::A>(element<decltype(t)>(c.a)), c.cuda});
      });
  }
}

}  // inline namespace PARITY_KERNEL_ISA
}  // namespace parity::impl::kernels
