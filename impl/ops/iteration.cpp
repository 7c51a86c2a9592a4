#include "impl/ops/iteration.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string_view>

#include "impl/cpu/loops.h"
#include "impl/error.h"
#include "impl/version_gate.h"

namespace parity::impl::ops {

namespace {
ScalarType wrapped_type(ScalarType t) { return is_floating(t) ? kDefaultFloat : t; }

// c10's combine_categories: the lower-priority class matters only when it is of a higher category.
ScalarType combine(ScalarType higher, ScalarType lower) {
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

struct Promoted {
  bool any = false;
  ScalarType type = ScalarType::Bool;
  void add(ScalarType t) {
    type = any ? promote_types(type, t) : t;
    any = true;
  }
};
}  // namespace

ScalarType result_type(std::initializer_list<const Operand*> operands) {
  Promoted dim, zero, wrapped;
  for (const Operand* o : operands) {
    if (o->wrapped) wrapped.add(wrapped_type(o->tensor.dtype()));
    else if (o->tensor.dim() == 0) zero.add(o->tensor.dtype());
    else dim.add(o->tensor.dtype());
  }
  Promoted low = zero;
  if (wrapped.any) low = Promoted{true, zero.any ? combine(zero.type, wrapped.type) : wrapped.type};
  if (!dim.any) return low.type;
  return low.any ? combine(dim.type, low.type) : dim.type;
}

Tensor wrap_scalar(Scalar s) {
  ScalarType t = s.kind == Scalar::Kind::Int ? ScalarType::Int64
                 : s.kind == Scalar::Kind::Bool ? ScalarType::Bool
                                                : ScalarType::Float64;
  Tensor out = Tensor::allocate(Layout{}, t);
  fill_kernel(out, s.value);
  return out;
}

Layout elementwise_layout(const Dims& shape, const std::vector<const Layout*>& inputs) {
  bool same_shape = true, has_scalars = false, has_tensors = false;
  for (const Layout* l : inputs) {
    (l->sizes.empty() ? has_scalars : has_tensors) = true;
    if (l->sizes != shape) same_shape = false;
  }
  if (has_scalars && has_tensors) same_shape = false;
  if (same_shape) {
    bool contiguous = true, channels_last = true, dense = true;
    for (const Layout* l : inputs) {
      contiguous &= l->is_contiguous();
      channels_last &= l->is_contiguous(MemoryFormat::ChannelsLast);
      dense &= l->is_non_overlapping_and_dense();
    }
    if (contiguous) return Layout::dense(shape);
    if (channels_last) return Layout::dense(shape, MemoryFormat::ChannelsLast);
    if (dense) {
      bool equal = true;
      for (const Layout* l : inputs) equal &= l->strides == inputs.back()->strides;
      if (equal) return Layout{shape, inputs.back()->strides, 0};
    }
  }
  const std::size_t ndim = shape.size();
  // Per-input strides after broadcasting (0 where broadcast), then TensorIterator's insertion sort of dims.
  std::vector<Dims> st;
  for (const Layout* l : inputs) {
    Dims s(ndim, 0);
    std::size_t off = ndim - l->sizes.size();
    for (std::size_t i = 0; i < l->sizes.size(); ++i)
      s[off + i] = (l->sizes[i] == 1 && shape[off + i] != 1) ? 0 : l->strides[i];
    st.push_back(std::move(s));
  }
  std::vector<std::size_t> perm = sort_dims(ndim, [&](std::size_t d0, std::size_t d1) {
    for (const Dims& s : st) {
      std::int64_t s0 = s[d0], s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;  // broadcast in this operand: ask the next one
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  });
  bool inverted = true;
  for (std::size_t j = 0; j < ndim; ++j) inverted &= perm[j] == ndim - j - 1;
  if (inverted) return Layout::dense(shape);
  Dims strides(ndim);
  std::int64_t next = 1;
  for (std::size_t j = 0; j < ndim; ++j) {
    strides[perm[j]] = next;
    next *= shape[perm[j]];
  }
  return Layout{shape, strides, 0};
}

// The CPU kernels read memory directly: a device tensor here is a caller's mistake, not a crash.
void require_cpu(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    PARITY_CHECK(t->device().type == DeviceType::CPU, ErrorKind::Device,
          "impl's CPU kernels got a tensor on " + t->device().str() + "; only copies run on CUDA so far");
}

void check_dispatch(const char* kernel, ScalarType t, std::initializer_list<ScalarType> missing) {
  for (ScalarType m : missing)
    PARITY_CHECK(t != m || (m == ScalarType::Float16 && follows(VersionGate::CpuKernelsTakeHalf)), ErrorKind::DType,
                 "\"" + std::string(kernel) + "\" not implemented for '" + std::string(type_name(t)) + "'");
}

// c10::checked_convert, named as Scalar::to<T> names the type.
void check_scalar_fits(double value, ScalarType dtype) {
  auto integral_fits = [&](double lo, double hi) { return std::isfinite(value) && value >= lo && value < hi; };
  const char* name = nullptr;
  bool fits = true;
  switch (dtype) {
    case ScalarType::Bool:
    case ScalarType::Float64: return;
    case ScalarType::Int32:
      name = "int";
      fits = integral_fits(-2147483648.0, 2147483648.0);
      break;
    case ScalarType::Int64:
      name = "int64_t";
      fits = integral_fits(-9223372036854775808.0, 9223372036854775808.0);
      break;
    case ScalarType::Float16:
      name = "at::Half";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= 65504.0;
      break;
    case ScalarType::BFloat16:
      name = "at::BFloat16";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= 3.3895313892515355e38;
      break;
    case ScalarType::Float32:
      name = "float";
      fits = std::isinf(value) || std::isnan(value) || std::abs(value) <= std::numeric_limits<float>::max();
      break;
  }
  PARITY_CHECK(fits, ErrorKind::Argument,
               "value cannot be converted to type " + std::string(name) + " without overflow");
}

Dims broadcast_strides(const Tensor& t, const Dims& shape) {
  Dims s(shape.size(), 0);
  std::size_t off = shape.size() - t.sizes().size();
  for (std::size_t i = 0; i < t.sizes().size(); ++i)
    s[off + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

void copy_kernel(const Tensor& dst, const Tensor& src) {
  require_cpu({&dst, &src});
  Dims ss = broadcast_strides(src, dst.sizes());
  dispatch(dst.dtype(), [&](auto dtag) {
    using D = decltype(dtag);
    dispatch(src.dtype(), [&](auto stag) {
      using S = decltype(stag);
      D* d = dst.data<D>();
      const S* s = src.data<S>();
      cpu::for_each_offset(dst.sizes(), {&dst.strides(), &ss}, [&](const std::int64_t* off) {
        if constexpr (std::is_same_v<D, bool>) d[off[0]] = s[off[1]] != S(0);
        else d[off[0]] = static_cast<D>(s[off[1]]);
      });
    });
  });
}

void binary_kernel(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  require_cpu({&out, &a, &b});
  Dims sa = broadcast_strides(a, out.sizes()), sb = broadcast_strides(b, out.sizes());
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides(), &sa, &sb}, [&](const std::int64_t* off) {
      T p = x[off[1]], q = y[off[2]];
      if constexpr (std::is_same_v<T, bool>) {
        o[off[0]] = op == BinaryOp::Mul ? (p && q) : (p || q);
      } else {
        switch (op) {
          case BinaryOp::Add: o[off[0]] = p + q; break;
          case BinaryOp::Sub: o[off[0]] = p - q; break;
          case BinaryOp::Mul: o[off[0]] = p * q; break;
          case BinaryOp::Div:  // true division: the output is always floating
            if constexpr (is_floating_v<T>) o[off[0]] = p / q;
            break;
        }
      }
    });
  });
}

void where_kernel(const Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b) {
  require_cpu({&out, &condition, &a, &b});
  PARITY_INTERNAL_ASSERT(condition.dtype() == ScalarType::Bool && a.dtype() == out.dtype() && b.dtype() == out.dtype(),
                         "where_kernel's dtypes");
  Dims sc = broadcast_strides(condition, out.sizes()), sa = broadcast_strides(a, out.sizes()),
       sb = broadcast_strides(b, out.sizes());
  const bool* c = condition.data<bool>();
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides(), &sc, &sa, &sb},
                         [&](const std::int64_t* off) { o[off[0]] = c[off[1]] ? x[off[2]] : y[off[3]]; });
  });
}

void compare_kernel(CompareOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  require_cpu({&out, &a, &b});
  PARITY_INTERNAL_ASSERT(out.dtype() == ScalarType::Bool && a.dtype() == b.dtype(), "compare_kernel's dtypes");
  Dims sa = broadcast_strides(a, out.sizes()), sb = broadcast_strides(b, out.sizes());
  bool* o = out.data<bool>();
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides(), &sa, &sb}, [&](const std::int64_t* off) {
      const bool equal = x[off[1]] == y[off[2]];
      switch (op) {
        case CompareOp::Eq: o[off[0]] = equal; break;
        case CompareOp::Ne: o[off[0]] = !equal; break;
      }
    });
  });
}

namespace {
template <typename T>
T int_pow(T base, std::int64_t e) {
  T result = 1;
  while (e > 0) {
    if (e & 1) result *= base;
    base *= base;
    e >>= 1;
  }
  return result;
}
}  // namespace

namespace {
// The elementwise functions of unary_kernel (map_unary passes bool elements through unchanged).
struct NegFn {
  template <typename T> static T apply(T v) { return static_cast<T>(-v); }
};
struct AbsFn {
  template <typename T> static T apply(T v) {
    // Integers wrap as in ATen: abs(INT64_MIN) is INT64_MIN (negated through unsigned to avoid overflow).
    if constexpr (std::is_integral_v<T>) return v < 0 ? static_cast<T>(0 - static_cast<std::uint64_t>(v)) : v;
    else return std::abs(v);
  }
};
struct SignFn {
  // sgn of a real number: NaN and zeros give 0.
  template <typename T> static T apply(T v) { return static_cast<T>((T(0) < v) - (v < T(0))); }
};


// out[i] = f(a[i], b[i]) for one element type, a and b broadcast to out's shape.
template <typename F>
void map_pairs(const Tensor& out, const Tensor& a, const Tensor& b, F&& make_f) {
  require_cpu({&out, &a, &b});
  PARITY_INTERNAL_ASSERT(a.dtype() == out.dtype() && b.dtype() == out.dtype(), "map_pairs reads its operands as out's dtype");
  PARITY_INTERNAL_ASSERT(broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes()), out.sizes()) == out.sizes(),
                         "map_pairs' operands must broadcast to out's shape");
  Dims sa = broadcast_strides(a, out.sizes()), sb = broadcast_strides(b, out.sizes());
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto f = make_f(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides(), &sa, &sb},
                         [&](const std::int64_t* off) { o[off[0]] = f(x[off[1]], y[off[2]]); });
  });
}

// A scalar argument as an element: ATen converts bounds to the kernel's type before comparing.
template <typename T>
T element(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else return static_cast<T>(v);
}
}  // namespace

void unary_kernel(UnaryOp op, const Tensor& out, const Tensor& x) {
  switch (op) {
    case UnaryOp::Neg: return map_unary<NegFn>(out, x);
    case UnaryOp::Abs: return map_unary<AbsFn>(out, x);
    case UnaryOp::Sign: return map_unary<SignFn>(out, x);
  }
}

void clamp_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  map_elements(out, x, [lo, hi](auto tag) {
    using T = decltype(tag);
    const bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const T l = element<T>(lo.value_or(0)), h = element<T>(hi.value_or(0));
    // std::max(v, l) keeps v when either is NaN, as ATen's scalar loop (and its vectorized one) does.
    return [=](T v) -> T {
      if (has_lo) v = std::max(v, l);
      if (has_hi) v = std::min(v, h);
      return v;
    };
  });
}

void clamp_mask_kernel(const Tensor& out, const Tensor& x, std::optional<double> lo, std::optional<double> hi,
                       bool bounds_included) {
  require_cpu({&out, &x});
  PARITY_INTERNAL_ASSERT(out.dtype() == ScalarType::Bool && out.sizes() == x.sizes(), "clamp_mask_kernel writes a bool mask of x's shape");
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const T l = element<T>(lo.value_or(0)), h = element<T>(hi.value_or(0));
    bool* o = out.data<bool>();
    const T* in = x.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides(), &x.strides()}, [&](const std::int64_t* off) {
      const T v = in[off[1]];
      o[off[0]] = bounds_included ? (!has_lo || v >= l) && (!has_hi || v <= h)
                                  : (!has_lo || v > l) && (!has_hi || v < h);
    });
  });
}

void result_backward_kernel(ResultBackward op, const Tensor& out, const Tensor& grad, const Tensor& y) {
  map_pairs(out, grad, y, [op](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      return +[](T g, T) -> T { return g; };  // never reached: sigmoid and tanh results are floating
    } else {
      // In float, rounded once; but sigmoid's float16 kernel computes in c10::Half, rounding after each
      // operation (as 2.15 does; 1.13 has no float16 sigmoid on the CPU to differentiate).
      if constexpr (std::is_same_v<T, Half>)
        if (op == ResultBackward::Sigmoid) return +[](T g, T v) -> T { return T(T(g * T(T(1) - v)) * v); };
      return op == ResultBackward::Sigmoid ? +[](T g, T v) -> T { return g * (T(1) - v) * v; }
                                           : +[](T g, T v) -> T { return g * (T(1) - v * v); };
    }
  });
}

void threshold_backward_kernel(const Tensor& out, const Tensor& grad, const Tensor& x, double threshold) {
  map_pairs(out, grad, x, [threshold](auto tag) {
    using T = decltype(tag);
    const T t = element<T>(threshold);
    return [t](T g, T v) -> T { return v <= t ? T(0) : g; };
  });
}

void matmul_kernel(const Tensor& out, const Tensor& a, const Tensor& b) {
  require_cpu({&out, &a, &b});
  // Sizes and strides as (batch, row, column); a 2-d operand is a single batch.
  auto batched = [](const Dims& d, std::int64_t pad) {
    Dims r = d;
    if (r.size() == 2) r.insert(r.begin(), pad);
    return r;
  };
  const Dims on = batched(out.sizes(), 1), os = batched(out.strides(), 0);
  const Dims as = batched(a.strides(), 0), bs = batched(b.strides(), 0);
  const std::int64_t inner = a.sizes().back();
  const bool in_float = follows(VersionGate::ProductsAccumulateInFloat);
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    for (std::int64_t n = 0; n < on[0]; ++n)
      for (std::int64_t i = 0; i < on[1]; ++i)
        for (std::int64_t j = 0; j < on[2]; ++j) {
          const T* row = x + n * as[0] + i * as[1];
          const T* col = y + n * bs[0] + j * bs[2];
          // 1.13: the accumulator is of the element type, each product and sum stored in it: for bfloat16 that
          // rounds at every step, as LibTorch 1.13's small bmm does. Its mm goes through gemm variants that
          // round elsewhere (per operand transposition), which impl does not model: the generator makes no
          // bfloat16 products (program/op_table.h, kProductTypes). 2.x accumulates a 16-bit product in float, in
          // order, and rounds once (VersionGate::ProductsAccumulateInFloat).
          if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
            if (in_float) {
              float acc = 0;
              for (std::int64_t k = 0; k < inner; ++k)
                acc += static_cast<float>(row[k * as[2]]) * static_cast<float>(col[k * bs[1]]);
              o[n * os[0] + i * os[1] + j * os[2]] = T(acc);
              continue;
            }
          }
          T acc = T(0);
          for (std::int64_t k = 0; k < inner; ++k) {
            if constexpr (std::is_same_v<T, bool>) acc = acc || (row[k * as[2]] && col[k * bs[1]]);
            else acc = static_cast<T>(acc + static_cast<T>(row[k * as[2]] * col[k * bs[1]]));
          }
          o[n * os[0] + i * os[1] + j * os[2]] = acc;
        }
  });
}

namespace {
// The vector registers of the kernels LibTorch runs: AVX2's 32 bytes, or AVX512's 64 where 2.x finds the CPU has
// it (VersionGate::Avx512Kernels; 1.13 runs AVX2 kernels on such CPUs too). ATEN_CPU_CAPABILITY=avx2 (or
// default) keeps 2.x on AVX2, as it tells LibTorch.
std::int64_t vector_bytes() {
  if (!follows(VersionGate::Avx512Kernels)) return 32;
  static const bool avx512 = [] {
    const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
    if (capability && std::string_view(capability) != "avx512") return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }();
  return avx512 ? 64 : 32;
}

// rsqrt_kernel (pow's -0.5) for bfloat16. cpu_kernel_vec runs a dense operand as one loop in memory order: its
// vectorised part, blocks of two vectors (32 elements under AVX2, 64 under AVX512), divides in float and rounds
// once; its scalar part (the rest, and every element of a strided operand) divides by c10's bfloat16 sqrt, so
// the root is rounded before the quotient.
void rsqrt_bfloat16(const Tensor& out, const Tensor& x) {
  // TensorIterator ignores size-1 dims, whose strides may differ.
  bool one_loop = out.is_non_overlapping_and_dense() && x.is_non_overlapping_and_dense();
  for (std::size_t d = 0; one_loop && d < out.sizes().size(); ++d)
    one_loop = out.sizes()[d] == 1 || out.strides()[d] == x.strides()[d];
  const std::int64_t block = 2 * vector_bytes() / static_cast<std::int64_t>(sizeof(BFloat16));
  const std::int64_t vectorised = one_loop ? out.numel() / block * block : 0;
  BFloat16* o = out.data<BFloat16>();
  const BFloat16* in = x.data<BFloat16>();
  cpu::for_each_offset(out.sizes(), {&out.strides(), &x.strides()}, [&](const std::int64_t* off) {
    const float root = std::sqrt(static_cast<float>(in[off[1]]));
    o[off[0]] = off[0] < vectorised ? BFloat16(1.0f / root) : BFloat16(1.0f / static_cast<float>(BFloat16(root)));
  });
}
}  // namespace

void pow_kernel(const Tensor& out, const Tensor& x, double e) {
  if (out.dtype() == ScalarType::BFloat16 && e == -0.5) {
    require_cpu({&out, &x});
    rsqrt_bfloat16(out, x);
    return;
  }
  map_elements(out, x, [e](auto tag) {
    using T = decltype(tag);
    return [e](T v) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return v;
      } else if constexpr (std::is_integral_v<T>) {
        return int_pow<T>(v, static_cast<std::int64_t>(e));
      } else if constexpr (std::is_same_v<T, Half>) {
        // LibTorch's Half pow is std::pow with the exponent as a Half, no special exponents: pow(-0, -0.5) is
        // +inf there, where the others' 1 / sqrt(-0) is -inf.
        return static_cast<T>(std::pow(static_cast<float>(v), static_cast<float>(T(e))));
      } else {
        // The special exponents PyTorch's pow kernel computes without std::pow (pow_tensor_scalar_optimized_kernel:
        // products in the element type, so each rounds in bfloat16; -2 divides a double 1 by the product).
        auto mul = [](T a, T b) { return static_cast<T>(a * b); };
        if (e == 2) return mul(v, v);
        if (e == 3) return mul(mul(v, v), v);
        if (e == 0.5) return static_cast<T>(std::sqrt(v));
        if (e == -0.5) return static_cast<T>(T(1) / std::sqrt(v));  // bfloat16: rsqrt_bfloat16
        if (e == -1) return static_cast<T>(T(1) / v);
        if (e == -2) return static_cast<T>(1.0 / static_cast<double>(mul(v, v)));
        return static_cast<T>(std::pow(v, static_cast<T>(e)));
      }
    };
  });
}

namespace {
// A Scalar as an element of type T: nonzero is true for bool, truncation toward zero for integers.
template <typename T>
T scalar_as(double value) {
  if constexpr (std::is_same_v<T, bool>) return value != 0;
  else return static_cast<T>(value);
}
}  // namespace

void fill_kernel(const Tensor& out, double value) {
  require_cpu({&out});
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T v = scalar_as<T>(value);
    cpu::for_each_offset(out.sizes(), {&out.strides()}, [&](const std::int64_t* off) { o[off[0]] = v; });
  });
}

void masked_fill_kernel(const Tensor& out, const Tensor& mask, double value) {
  require_cpu({&out, &mask});
  PARITY_INTERNAL_ASSERT(mask.dtype() == ScalarType::Bool, "masked_fill_kernel's mask dtype");
  const Dims sm = broadcast_strides(mask, out.sizes());
  const bool* m = mask.data<bool>();
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T v = scalar_as<T>(value);
    cpu::for_each_offset(out.sizes(), {&out.strides(), &sm}, [&](const std::int64_t* off) {
      if (m[off[1]]) o[off[0]] = v;
    });
  });
}

void addcmul_kernel(const Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, double value) {
  require_cpu({&out, &self, &t1, &t2});
  PARITY_INTERNAL_ASSERT(self.dtype() == out.dtype() && t1.dtype() == out.dtype() && t2.dtype() == out.dtype(),
                         "addcmul_kernel's dtypes");
  const Dims ss = broadcast_strides(self, out.sizes()), s1 = broadcast_strides(t1, out.sizes()),
             s2 = broadcast_strides(t2, out.sizes());
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      PARITY_INTERNAL_ASSERT(false, "addcmul_kernel on bool (the op refuses it)");
    } else {
      // Integers compute in unsigned arithmetic: two's-complement wrap-around, as ATen's int64 kernels.
      using A = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::type_identity<T>>::type;
      const A v = static_cast<A>(scalar_as<T>(value));
      T* o = out.data<T>();
      const T* a = self.data<T>();
      const T* b = t1.data<T>();
      const T* c = t2.data<T>();
      cpu::for_each_offset(out.sizes(), {&out.strides(), &ss, &s1, &s2}, [&](const std::int64_t* off) {
        o[off[0]] = static_cast<T>(static_cast<A>(a[off[1]]) + v * static_cast<A>(b[off[2]]) * static_cast<A>(c[off[3]]));
      });
    }
  });
}

void sum_kernel(const Tensor& out, const Tensor& x, const std::vector<bool>& reduce) {
  require_cpu({&out, &x});
  // out has x's rank (keepdim); reduced dims have stride 0 so every input element lands on its output slot.
  Dims os = out.strides();
  for (std::size_t i = 0; i < reduce.size(); ++i)
    if (reduce[i]) os[i] = 0;
  const auto slots = static_cast<std::size_t>(out.layout().storage_extent() - out.offset() + 1);
  if (!is_floating(out.dtype())) {
    // Integral sums are int64 and wrap around as two's complement, as ATen's do (never through a double, which
    // would round past 2^53 and saturate where int64 wraps).
    std::vector<std::uint64_t> acc(slots, 0);
    dispatch(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      cpu::for_each_offset(x.sizes(), {&os, &x.strides()}, [&](const std::int64_t* off) {
        acc[off[0]] += static_cast<std::uint64_t>(static_cast<std::int64_t>(in[off[1]]));
      });
    });
    PARITY_INTERNAL_ASSERT(out.dtype() == ScalarType::Int64, "an integral sum is int64");
    std::int64_t* o = out.data<std::int64_t>();
    cpu::for_each_offset(out.sizes(), {&out.strides()}, [&](const std::int64_t* off) {
      o[off[0]] = static_cast<std::int64_t>(acc[off[0]]);
    });
    return;
  }
  std::vector<double> acc(slots, 0.0);
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    cpu::for_each_offset(x.sizes(), {&os, &x.strides()}, [&](const std::int64_t* off) {
      acc[off[0]] += static_cast<double>(in[off[1]]);
    });
  });
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    cpu::for_each_offset(out.sizes(), {&out.strides()}, [&](const std::int64_t* off) {
      o[off[0]] = static_cast<T>(acc[off[0]]);
    });
  });
}

namespace {
bool has_internal_overlap(const Layout& l) {
  if (l.is_non_overlapping_and_dense()) return false;
  for (std::size_t i = 0; i < l.sizes.size(); ++i)
    if (l.strides[i] == 0 && l.sizes[i] > 1) return true;
  return false;
}
}  // namespace

// ATen's get_overlap_status: the same tensor overlaps fully; dense tensors of one storage by their byte ranges.
Overlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::No;
  if (!a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense()) return Overlap::TooHard;
  if (a.storage().key() != b.storage().key()) return Overlap::No;
  auto ab = a.offset() * static_cast<std::int64_t>(element_size(a.dtype()));
  auto ae = ab + a.numel() * static_cast<std::int64_t>(element_size(a.dtype()));
  auto bb = b.offset() * static_cast<std::int64_t>(element_size(b.dtype()));
  auto be = bb + b.numel() * static_cast<std::int64_t>(element_size(b.dtype()));
  if (ab == bb && ae == be) return a.strides() == b.strides() ? Overlap::Full : Overlap::Partial;
  return ab < be && bb < ae ? Overlap::Partial : Overlap::No;
}

void check_no_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  PARITY_CHECK(!has_internal_overlap(out.layout()), ErrorKind::Overlap,
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
        "Please clone() the tensor before performing the operation.");
  check_no_partial_overlap(out, inputs);
}

void check_no_partial_overlap(const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* in : inputs)
    PARITY_CHECK(overlap_status(out, *in) != Overlap::Partial, ErrorKind::Overlap,
          "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
          "memory location. Please clone() the tensor before performing the operation.");
}

}  // namespace parity::impl::ops
