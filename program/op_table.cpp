#include "program/op_table.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <unordered_set>

#include "program/internal_assert.h"
#include "program/program.h"

namespace parity::program {
namespace {

using Metas = std::span<const Meta>;
using Out = std::optional<Meta>;

int rank(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::Int64: return 1;
    case DType::Float32: return 2;
    case DType::Float64: return 3;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::optional<std::int64_t> wrap_dim(std::int64_t dim, std::size_t ndim) {
  auto n = static_cast<std::int64_t>(std::max<std::size_t>(ndim, 1));
  if (dim < -n || dim >= n) return std::nullopt;
  return dim < 0 ? dim + n : dim;
}

std::optional<std::vector<std::int64_t>> broadcast(const std::vector<std::int64_t>& a,
                                                   const std::vector<std::int64_t>& b) {
  std::size_t n = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// PyTorch's result_type: dimensioned tensors outrank zero-dim ones, which outrank wrapped scalars; a lower
// class only matters when it is of a higher category (bool < integral < floating).
DType combine(DType higher, std::optional<DType> lower) {
  if (!lower) return higher;
  if (is_floating(higher)) return higher;
  if (higher == DType::Bool || is_floating(*lower)) return promote(higher, *lower);
  return higher;
}

DType scalar_dtype(Scalar::Kind k) {
  switch (k) {
    case Scalar::Kind::Int: return DType::Int64;
    case Scalar::Kind::Float: return DType::Float32;
    case Scalar::Kind::Bool: return DType::Bool;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

DType tensor_result_type(const Meta& a, const Meta& b) {
  bool a0 = a.sizes.empty(), b0 = b.sizes.empty();
  if (a0 == b0) return promote(a.dtype, b.dtype);
  return a0 ? combine(b.dtype, a.dtype) : combine(a.dtype, b.dtype);
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

bool format_fits(MemoryFormat mf, std::size_t ndim) {
  if (mf == MemoryFormat::ChannelsLast) return ndim == 4;
  if (mf == MemoryFormat::ChannelsLast3d) return ndim == 5;
  return true;
}

Out fresh(Metas, const Attrs& a) {
  if (a.requires_grad && !is_floating(a.dtype)) return std::nullopt;
  for (auto s : a.sizes)
    if (s < 0) return std::nullopt;
  return Meta{a.sizes, a.dtype, a.requires_grad};
}
Out rand_rule(Metas m, const Attrs& a) {
  if (a.sizes.size() != a.strides.size() || a.offset < 0) return std::nullopt;
  return fresh(m, a);
}
Out arange_rule(Metas, const Attrs& a) {
  if (a.end < 0) return std::nullopt;
  return Meta{{a.end}, a.dtype, false};
}
Out like_rule(Metas m, const Attrs& a) {
  if (!format_fits(a.memory_format, m[0].sizes.size())) return std::nullopt;
  return Meta{m[0].sizes, m[0].dtype, false};
}
Out clone_rule(Metas m, const Attrs& a) {
  if (!format_fits(a.memory_format, m[0].sizes.size())) return std::nullopt;
  return m[0];
}
// contiguous(preserve_format) returns an already-contiguous tensor and raises only when it would copy; the
// generator does not track strides, so it counts on the common (contiguous) case.
Out contiguous_rule(Metas m, const Attrs& a) { return clone_rule(m, a); }
Out detach_rule(Metas m, const Attrs&) { return Meta{m[0].sizes, m[0].dtype, false}; }
Out copy_rule(Metas m, const Attrs&) {
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b || *b != m[0].sizes) return std::nullopt;
  if (m[1].requires_grad && !is_floating(m[0].dtype)) return std::nullopt;
  return Meta{m[0].sizes, m[0].dtype, m[0].requires_grad || m[1].requires_grad};
}
Out view_rule(Metas m, const Attrs& a) {
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < a.sizes.size(); ++i) {
    if (a.sizes[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(i);
    } else if (a.sizes[i] < 0) {
      return std::nullopt;
    } else {
      known *= a.sizes[i];
    }
  }
  auto sizes = a.sizes;
  std::int64_t n = m[0].numel();
  if (infer >= 0) {
    if (known == 0 || n % known != 0) return std::nullopt;
    sizes[infer] = n / known;
  } else if (known != n) {
    return std::nullopt;
  }
  return Meta{sizes, m[0].dtype, m[0].requires_grad};
}
Out transpose_rule(Metas m, const Attrs& a) {
  auto d0 = wrap_dim(a.dim, m[0].sizes.size()), d1 = wrap_dim(a.dim1, m[0].sizes.size());
  if (!d0 || !d1) return std::nullopt;
  Meta out = m[0];
  if (!out.sizes.empty()) std::swap(out.sizes[*d0], out.sizes[*d1]);
  return out;
}
Out permute_rule(Metas m, const Attrs& a) {
  if (a.dims.size() != m[0].sizes.size()) return std::nullopt;
  Meta out = m[0];
  std::vector<bool> seen(a.dims.size());
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    auto d = wrap_dim(a.dims[i], a.dims.size());
    if (!d || seen[*d]) return std::nullopt;
    seen[*d] = true;
    out.sizes[i] = m[0].sizes[*d];
  }
  return out;
}
Out slice_rule(Metas m, const Attrs& a) {
  if (m[0].sizes.empty() || a.step <= 0) return std::nullopt;
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (!d) return std::nullopt;
  std::int64_t n = m[0].sizes[*d];
  auto clamp = [n](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + n : v, 0, n); };
  std::int64_t s = clamp(a.start), e = std::max(clamp(a.end), clamp(a.start));
  Meta out = m[0];
  out.sizes[*d] = (e - s + a.step - 1) / a.step;
  return out;
}
Out select_rule(Metas m, const Attrs& a) {
  if (m[0].sizes.empty()) return std::nullopt;
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (!d) return std::nullopt;
  std::int64_t n = m[0].sizes[*d];
  if (a.index < -n || a.index >= n) return std::nullopt;
  Meta out = m[0];
  out.sizes.erase(out.sizes.begin() + *d);
  return out;
}
Out narrow_rule(Metas m, const Attrs& a) {
  if (m[0].sizes.empty()) return std::nullopt;
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (!d) return std::nullopt;
  std::int64_t n = m[0].sizes[*d];
  if (a.start < -n || a.start > n || a.length < 0) return std::nullopt;
  std::int64_t s = a.start < 0 ? a.start + n : a.start;
  if (s + a.length > n) return std::nullopt;
  Meta out = m[0];
  out.sizes[*d] = a.length;
  return out;
}
Out expand_rule(Metas m, const Attrs& a) {
  const auto& in = m[0].sizes;
  if (a.sizes.size() < in.size()) return std::nullopt;
  Meta out = m[0];
  out.sizes = a.sizes;
  std::size_t lead = a.sizes.size() - in.size();
  for (std::size_t i = 0; i < a.sizes.size(); ++i) {
    if (i < lead) {
      if (a.sizes[i] < 0) return std::nullopt;
      continue;
    }
    std::int64_t s = in[i - lead];
    if (a.sizes[i] == -1) out.sizes[i] = s;
    else if (s != 1 && a.sizes[i] != s) return std::nullopt;
  }
  return out;
}
Out squeeze_rule(Metas m, const Attrs&) {
  Meta out = m[0];
  std::erase(out.sizes, 1);
  return out;
}
Out squeeze_dim_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (!d) return std::nullopt;
  Meta out = m[0];
  if (!out.sizes.empty() && out.sizes[*d] == 1) out.sizes.erase(out.sizes.begin() + *d);
  return out;
}
Out unsqueeze_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size() + 1);
  if (!d) return std::nullopt;
  Meta out = m[0];
  out.sizes.insert(out.sizes.begin() + *d, 1);
  return out;
}
Out as_strided_rule(Metas m, const Attrs& a) {
  if (a.sizes.size() != a.strides.size() || a.offset < 0) return std::nullopt;
  for (std::size_t i = 0; i < a.sizes.size(); ++i)
    if (a.sizes[i] < 0 || a.strides[i] < 0) return std::nullopt;
  return Meta{a.sizes, m[0].dtype, m[0].requires_grad};
}
Out binary_rule(OpId op, Metas m) {
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b) return std::nullopt;
  DType t = tensor_result_type(m[0], m[1]);
  if (op == OpId::Sub && (m[0].dtype == DType::Bool || m[1].dtype == DType::Bool)) return std::nullopt;
  if (op == OpId::Div && !is_floating(t)) t = DType::Float32;
  return Meta{*b, t, m[0].requires_grad || m[1].requires_grad};
}
Out add_rule(Metas m, const Attrs&) { return binary_rule(OpId::Add, m); }
Out sub_rule(Metas m, const Attrs&) { return binary_rule(OpId::Sub, m); }
Out mul_rule(Metas m, const Attrs&) { return binary_rule(OpId::Mul, m); }
Out div_rule(Metas m, const Attrs&) { return binary_rule(OpId::Div, m); }
Out scalar_rule(OpId op, Metas m, const Attrs& a) {
  DType t = combine(m[0].dtype, scalar_dtype(a.scalar.kind));
  if (op == OpId::SubScalar && (m[0].dtype == DType::Bool || a.scalar.kind == Scalar::Kind::Bool))
    return std::nullopt;
  if (op == OpId::DivScalar && !is_floating(t)) t = DType::Float32;
  return Meta{m[0].sizes, t, m[0].requires_grad};
}
Out add_s_rule(Metas m, const Attrs& a) { return scalar_rule(OpId::AddScalar, m, a); }
Out sub_s_rule(Metas m, const Attrs& a) { return scalar_rule(OpId::SubScalar, m, a); }
Out mul_s_rule(Metas m, const Attrs& a) { return scalar_rule(OpId::MulScalar, m, a); }
Out div_s_rule(Metas m, const Attrs& a) { return scalar_rule(OpId::DivScalar, m, a); }
Out neg_rule(Metas m, const Attrs&) {
  if (m[0].dtype == DType::Bool) return std::nullopt;
  return m[0];
}
Out pow_rule(Metas m, const Attrs& a) {
  if (!is_floating(m[0].dtype) && a.scalar.kind != Scalar::Kind::Float && a.scalar.value < 0) return std::nullopt;
  Meta out = m[0];
  out.dtype = combine(m[0].dtype, scalar_dtype(a.scalar.kind));
  return out;
}
Out float_unary_rule(Metas m, const Attrs&) {  // exp, sigmoid, tanh: integral inputs give the default float
  Meta out = m[0];
  if (!is_floating(out.dtype)) out.dtype = DType::Float32;
  return out;
}
Out no_bool_rule(Metas m, const Attrs&) {  // relu, abs: not defined for bool
  if (m[0].dtype == DType::Bool) return std::nullopt;
  return m[0];
}
// clamp's bounds are wrapped numbers in type promotion; clamp of a bool result is not defined.
Out clamp_rule(Metas m, const Attrs& a) {
  if (!a.min && !a.max) return std::nullopt;
  Meta out = m[0];
  for (const auto& b : {a.min, a.max})
    if (b) out.dtype = combine(out.dtype, scalar_dtype(b->kind));
  if (out.dtype == DType::Bool) return std::nullopt;
  return out;
}
// mm and matmul do not promote: both operands have one dtype, and bool has no kernel.
Out mm_rule(Metas m, const Attrs&) {
  const auto &a = m[0].sizes, &b = m[1].sizes;
  if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return std::nullopt;
  if (m[0].dtype != m[1].dtype || m[0].dtype == DType::Bool) return std::nullopt;
  return Meta{{a[0], b[1]}, m[0].dtype, m[0].requires_grad || m[1].requires_grad};
}
Out matmul_rule(Metas m, const Attrs&) {
  auto a = m[0].sizes, b = m[1].sizes;
  if (a.empty() || b.empty()) return std::nullopt;
  if (m[0].dtype != m[1].dtype || m[0].dtype == DType::Bool) return std::nullopt;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a.back() != b[b.size() - 2]) return std::nullopt;
  auto batch = broadcast({a.begin(), a.end() - 2}, {b.begin(), b.end() - 2});
  if (!batch) return std::nullopt;
  std::vector<std::int64_t> out = *batch;
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return Meta{out, m[0].dtype, m[0].requires_grad || m[1].requires_grad};
}
Out diagonal_rule(Metas m, const Attrs& a) {
  const std::size_t n = m[0].sizes.size();
  if (n < 2) return std::nullopt;
  auto d1 = wrap_dim(a.dim, n), d2 = wrap_dim(a.dim1, n);
  if (!d1 || !d2 || *d1 == *d2) return std::nullopt;
  std::int64_t s1 = m[0].sizes[*d1], s2 = m[0].sizes[*d2];
  std::int64_t len = a.offset >= 0 ? std::min(s1, s2 - a.offset) : std::min(s1 + a.offset, s2);
  Meta out = m[0];
  out.sizes.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<std::int64_t>(i) != *d1 && static_cast<std::int64_t>(i) != *d2) out.sizes.push_back(m[0].sizes[i]);
  out.sizes.push_back(std::max<std::int64_t>(len, 0));
  return out;
}
Out t_rule(Metas m, const Attrs&) {
  if (m[0].sizes.size() > 2) return std::nullopt;
  Meta out = m[0];
  std::reverse(out.sizes.begin(), out.sizes.end());
  return out;
}
Out unfold_rule(Metas m, const Attrs& a) {
  if (m[0].sizes.empty() || a.step <= 0 || a.size < 0) return std::nullopt;
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (!d) return std::nullopt;
  const std::int64_t n = m[0].sizes[*d];
  if (a.size > n) return std::nullopt;
  Meta out = m[0];
  out.sizes[*d] = (n - a.size) / a.step + 1;
  out.sizes.push_back(a.size);
  return out;
}
// The multi-output views keep output `index`; the number of outputs follows LibTorch's split rules.
Out pick_output(Metas m, const Attrs& a, std::int64_t piece, std::int64_t count) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (m[0].sizes.empty() || !d || a.index < 0 || a.index >= count) return std::nullopt;
  Meta out = m[0];
  const std::int64_t n = m[0].sizes[*d];
  out.sizes[*d] = std::clamp<std::int64_t>(n - a.index * piece, 0, piece);
  return out;
}
Out unbind_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (m[0].sizes.empty() || !d) return std::nullopt;
  const std::int64_t n = m[0].sizes[*d];
  if (a.index < 0 || a.index >= n) return std::nullopt;
  Meta out = m[0];
  out.sizes.erase(out.sizes.begin() + *d);
  return out;
}
Out split_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (m[0].sizes.empty() || !d || a.size < 0) return std::nullopt;
  const std::int64_t n = m[0].sizes[*d];
  if (a.size == 0 && n != 0) return std::nullopt;
  const std::int64_t count = a.size == 0 ? 1 : std::max<std::int64_t>((n + a.size - 1) / a.size, 1);
  return pick_output(m, a, a.size, count);
}
Out chunk_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (m[0].sizes.empty() || !d || a.chunks <= 0) return std::nullopt;
  const std::int64_t n = m[0].sizes[*d];
  const std::int64_t piece = (n + a.chunks - 1) / a.chunks;
  // An empty dim is split into `chunks` empty pieces (split_with_sizes), any other into ceil(n / piece).
  const std::int64_t count = n == 0 ? a.chunks : (n + piece - 1) / piece;
  return pick_output(m, a, piece, count);
}
Out data_rule(Metas m, const Attrs&) { return Meta{m[0].sizes, m[0].dtype, false}; }
Out to_rule(Metas m, const Attrs& a) {
  if (a.dtype == m[0].dtype && !a.copy) return m[0];
  return Meta{m[0].sizes, a.dtype, m[0].requires_grad && is_floating(a.dtype)};
}
Out deepcopy_rule(Metas m, const Attrs&) { return m[0]; }  // non-leaves raise: the generator's state knows
Out backward_grad_rule(Metas m, const Attrs&) {
  if (!m[0].requires_grad) return std::nullopt;
  // The gradient is summed down to the root's shape when the root's shape broadcasts to it.
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b || *b != m[1].sizes) return std::nullopt;
  return Meta{};
}
Out reduce_rule(bool mean, Metas m, const Attrs& a, bool with_dims) {
  if (mean && !is_floating(m[0].dtype)) return std::nullopt;
  Meta out = m[0];
  if (!is_floating(out.dtype)) out.dtype = DType::Int64;
  if (!with_dims) {
    out.sizes.clear();
    return out;
  }
  std::vector<bool> reduce(m[0].sizes.size());
  for (auto d : a.dims) {
    auto w = wrap_dim(d, m[0].sizes.size());
    if (!w) return std::nullopt;
    if (!m[0].sizes.empty()) {
      if (reduce[*w]) return std::nullopt;
      reduce[*w] = true;
    }
  }
  if (a.dims.empty()) reduce.assign(reduce.size(), true);  // an empty list reduces every dim
  out.sizes.clear();
  for (std::size_t i = 0; i < reduce.size(); ++i) {
    if (!reduce[i]) out.sizes.push_back(m[0].sizes[i]);
    else if (a.keepdim) out.sizes.push_back(1);
  }
  return out;
}
Out sum_rule(Metas m, const Attrs& a) { return reduce_rule(false, m, a, false); }
Out sum_dims_rule(Metas m, const Attrs& a) { return reduce_rule(false, m, a, true); }
Out mean_rule(Metas m, const Attrs& a) { return reduce_rule(true, m, a, false); }
Out mean_dims_rule(Metas m, const Attrs& a) { return reduce_rule(true, m, a, true); }
Out inplace_rule(OpId outofplace, Metas m, const Attrs& a) {
  const OpSpec& s = spec(outofplace);
  Out r = s.infer(m, a);
  if (!r || r->sizes != m[0].sizes || !can_cast(r->dtype, m[0].dtype)) return std::nullopt;
  return Meta{m[0].sizes, m[0].dtype, r->requires_grad};
}
Out add__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Add, m, a); }
Out sub__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Sub, m, a); }
Out mul__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Mul, m, a); }
Out div__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Div, m, a); }
Out add_s__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::AddScalar, m, a); }
Out sub_s__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::SubScalar, m, a); }
Out mul_s__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::MulScalar, m, a); }
Out div_s__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::DivScalar, m, a); }
Out exp__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Exp, m, a); }
Out sigmoid__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Sigmoid, m, a); }
Out tanh__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Tanh, m, a); }
Out relu__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Relu, m, a); }
Out abs__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Abs, m, a); }
Out clamp__rule(Metas m, const Attrs& a) { return inplace_rule(OpId::Clamp, m, a); }
Out same_rule(Metas m, const Attrs&) { return m[0]; }
Out backward_rule(Metas m, const Attrs&) {
  if (!m[0].requires_grad || m[0].numel() != 1) return std::nullopt;
  return Meta{};
}
Out retain_grad_rule(Metas m, const Attrs&) {
  if (!m[0].requires_grad) return std::nullopt;
  return Meta{};
}
Out requires_grad__rule(Metas m, const Attrs& a) {
  if (a.requires_grad && !is_floating(m[0].dtype)) return std::nullopt;
  Meta out = m[0];
  out.requires_grad = a.requires_grad;
  return out;
}

using A = Attr;
constexpr unsigned kInPlace = kMutates;

std::vector<OpSpec> build_table() {
  // clang-format off
  std::vector<OpSpec> t = {
    {OpId::Rand, "rand", OpKind::Factory, 0, {A::Strided, A::DType, A::RequiresGrad, A::Seed}, kNone, 30,
     "torch::tensor(std::vector<double>{data}, torch::kFloat64).to({dtype}).as_strided({sizes}, {strides}, {offset}).detach().requires_grad_({requires_grad})",
     "torch.tensor({data}, dtype=torch.float64).to({dtype}).as_strided({sizes}, {strides}, {offset}).detach().requires_grad_({requires_grad})",
     rand_rule},
    {OpId::Zeros, "zeros", OpKind::Factory, 0, {A::Sizes, A::DType, A::RequiresGrad}, kNone, 3,
     "torch::zeros({sizes}, torch::dtype({dtype}).requires_grad({requires_grad}))",
     "torch.zeros({sizes}, dtype={dtype}, requires_grad={requires_grad})", fresh},
    {OpId::Ones, "ones", OpKind::Factory, 0, {A::Sizes, A::DType, A::RequiresGrad}, kNone, 3,
     "torch::ones({sizes}, torch::dtype({dtype}).requires_grad({requires_grad}))",
     "torch.ones({sizes}, dtype={dtype}, requires_grad={requires_grad})", fresh},
    {OpId::Full, "full", OpKind::Factory, 0, {A::Sizes, A::Scalar, A::DType, A::RequiresGrad}, kNone, 3,
     "torch::full({sizes}, {scalar}, torch::dtype({dtype}).requires_grad({requires_grad}))",
     "torch.full({sizes}, {scalar}, dtype={dtype}, requires_grad={requires_grad})", fresh},
    {OpId::Arange, "arange", OpKind::Factory, 0, {A::End, A::DType}, kNone, 2,
     "torch::arange({end}, torch::dtype({dtype}))",
     "torch.arange({end}, dtype={dtype})", arange_rule},
    {OpId::Empty, "empty", OpKind::Factory, 0, {A::Sizes, A::DType}, kValuesUndefined, 1,
     "torch::empty({sizes}, torch::dtype({dtype}))",
     "torch.empty({sizes}, dtype={dtype})", fresh},
    {OpId::EmptyLike, "empty_like", OpKind::Factory, 1, {A::MemoryFormat}, kValuesUndefined, 4,
     "torch::empty_like({0}, torch::TensorOptions(), {memory_format})",
     "torch.empty_like({0}, memory_format={memory_format})", like_rule},
    {OpId::ZerosLike, "zeros_like", OpKind::Factory, 1, {A::MemoryFormat}, kNone, 3,
     "torch::zeros_like({0}, torch::TensorOptions(), {memory_format})",
     "torch.zeros_like({0}, memory_format={memory_format})", like_rule},

    {OpId::Clone, "clone", OpKind::Copy, 1, {A::MemoryFormat}, kNone, 10,
     "{0}.clone({memory_format})", "{0}.clone(memory_format={memory_format})", clone_rule},
    {OpId::Contiguous, "contiguous", OpKind::Copy, 1, {A::MemoryFormat}, kNone, 6,
     "{0}.contiguous({memory_format})", "{0}.contiguous(memory_format={memory_format})", contiguous_rule},
    {OpId::Detach, "detach", OpKind::Copy, 1, {}, kNone, 6, "{0}.detach()", "{0}.detach()", detach_rule},
    {OpId::Detach_, "detach_", OpKind::Copy, 1, {}, kMutates, 2, "{0}.detach_()", "{0}.detach_()", detach_rule},
    {OpId::Copy_, "copy_", OpKind::InPlace, 2, {}, kInPlace, 6, "{0}.copy_({1})", "{0}.copy_({1})", copy_rule},
    {OpId::Data, "data", OpKind::Copy, 1, {}, kNone, 3, "{0}.variable_data()", "{0}.data", data_rule},
    {OpId::To, "to", OpKind::Copy, 1, {A::DType, A::Copy}, kNone, 4,
     "{0}.to({dtype}, false, {copy})", "{0}.to({dtype}, copy={copy})", to_rule},
    {OpId::NewTensor, "new_tensor", OpKind::Copy, 1, {}, kNone, 3,
     "{0}.detach().to({0}.scalar_type(), false, true)", "{0}.new_tensor({0})", data_rule},
    // The C++ side follows Python's Tensor.__deepcopy__ with LibTorch calls (parity_deepcopy in the repro).
    {OpId::Deepcopy, "deepcopy", OpKind::Copy, 1, {A::Memo}, kNone, 4,
     "parity_deepcopy({0}, memo{memo})", "copy.deepcopy({0}, memo{memo})", deepcopy_rule},

    {OpId::View, "view", OpKind::View, 1, {A::ViewSizes}, kNone, 5, "{0}.view({sizes})", "{0}.view({sizes})", view_rule},
    {OpId::Reshape, "reshape", OpKind::View, 1, {A::ViewSizes}, kNone, 5, "{0}.reshape({sizes})", "{0}.reshape({sizes})", view_rule},
    {OpId::Transpose, "transpose", OpKind::View, 1, {A::Dim, A::Dim1}, kNone, 6,
     "{0}.transpose({dim}, {dim1})", "{0}.transpose({dim}, {dim1})", transpose_rule},
    {OpId::Permute, "permute", OpKind::View, 1, {A::Dims}, kNone, 4, "{0}.permute({dims})", "{0}.permute({dims})", permute_rule},
    {OpId::Slice, "slice", OpKind::View, 1, {A::Dim, A::Start, A::End, A::Step}, kNone, 6,
     "{0}.slice({dim}, {start}, {end}, {step})", "torch.ops.aten.slice.Tensor({0}, {dim}, {start}, {end}, {step})", slice_rule},
    {OpId::Select, "select", OpKind::View, 1, {A::Dim, A::Index}, kNone, 4,
     "{0}.select({dim}, {index})", "{0}.select({dim}, {index})", select_rule},
    {OpId::Narrow, "narrow", OpKind::View, 1, {A::Dim, A::Start, A::Length}, kNone, 3,
     "{0}.narrow({dim}, {start}, {length})", "{0}.narrow({dim}, {start}, {length})", narrow_rule},
    {OpId::Expand, "expand", OpKind::View, 1, {A::ExpandSizes}, kNone, 4, "{0}.expand({sizes})", "{0}.expand({sizes})", expand_rule},
    {OpId::Squeeze, "squeeze", OpKind::View, 1, {}, kNone, 2, "{0}.squeeze()", "{0}.squeeze()", squeeze_rule},
    {OpId::SqueezeDim, "squeeze_dim", OpKind::View, 1, {A::Dim}, kNone, 2, "{0}.squeeze({dim})", "{0}.squeeze({dim})", squeeze_dim_rule},
    {OpId::Unsqueeze, "unsqueeze", OpKind::View, 1, {A::Dim}, kNone, 3, "{0}.unsqueeze({dim})", "{0}.unsqueeze({dim})", unsqueeze_rule},
    {OpId::AsStrided, "as_strided", OpKind::View, 1, {A::Strided}, kNone, 2,
     "{0}.as_strided({sizes}, {strides}, {offset})", "{0}.as_strided({sizes}, {strides}, {offset})", as_strided_rule},
    {OpId::Diagonal, "diagonal", OpKind::View, 1, {A::Offset, A::Dim, A::Dim1}, kNone, 3,
     "{0}.diagonal({offset}, {dim}, {dim1})", "{0}.diagonal({offset}, {dim}, {dim1})", diagonal_rule},
    {OpId::T, "t", OpKind::View, 1, {}, kNone, 3, "{0}.t()", "{0}.t()", t_rule},
    {OpId::Unfold, "unfold", OpKind::View, 1, {A::Dim, A::Size, A::Step}, kNone, 2,
     "{0}.unfold({dim}, {size}, {step})", "{0}.unfold({dim}, {size}, {step})", unfold_rule},
    {OpId::Unbind, "unbind", OpKind::View, 1, {A::Dim, A::Index}, kNone, 3,
     "{0}.unbind({dim})[{index}]", "{0}.unbind({dim})[{index}]", unbind_rule},
    {OpId::Split, "split", OpKind::View, 1, {A::Dim, A::Size, A::Index}, kNone, 3,
     "{0}.split({size}, {dim})[{index}]", "{0}.split({size}, {dim})[{index}]", split_rule},
    {OpId::Chunk, "chunk", OpKind::View, 1, {A::Dim, A::Chunks, A::Index}, kNone, 3,
     "{0}.chunk({chunks}, {dim})[{index}]", "{0}.chunk({chunks}, {dim})[{index}]", chunk_rule},

    {OpId::Add, "add", OpKind::Arithmetic, 2, {}, kNone, 8, "{0}.add({1})", "{0}.add({1})", add_rule},
    {OpId::Sub, "sub", OpKind::Arithmetic, 2, {}, kNone, 5, "{0}.sub({1})", "{0}.sub({1})", sub_rule},
    {OpId::Mul, "mul", OpKind::Arithmetic, 2, {}, kNone, 8, "{0}.mul({1})", "{0}.mul({1})", mul_rule},
    {OpId::Div, "div", OpKind::Arithmetic, 2, {}, kNone, 4, "{0}.div({1})", "{0}.div({1})", div_rule},
    {OpId::AddScalar, "add_scalar", OpKind::Arithmetic, 1, {A::Scalar}, kNone, 4, "{0}.add({scalar})", "{0}.add({scalar})", add_s_rule},
    {OpId::SubScalar, "sub_scalar", OpKind::Arithmetic, 1, {A::Scalar}, kNone, 2, "{0}.sub({scalar})", "{0}.sub({scalar})", sub_s_rule},
    {OpId::MulScalar, "mul_scalar", OpKind::Arithmetic, 1, {A::Scalar}, kNone, 4, "{0}.mul({scalar})", "{0}.mul({scalar})", mul_s_rule},
    {OpId::DivScalar, "div_scalar", OpKind::Arithmetic, 1, {A::Scalar}, kNone, 2, "{0}.div({scalar})", "{0}.div({scalar})", div_s_rule},
    {OpId::Neg, "neg", OpKind::Arithmetic, 1, {}, kNone, 3, "{0}.neg()", "{0}.neg()", neg_rule},
    {OpId::Pow, "pow", OpKind::Arithmetic, 1, {A::Scalar}, kNone, 5, "{0}.pow({scalar})", "{0}.pow({scalar})", pow_rule},
    {OpId::Exp, "exp", OpKind::Arithmetic, 1, {}, kNone, 5, "{0}.exp()", "{0}.exp()", float_unary_rule},
    {OpId::Sigmoid, "sigmoid", OpKind::Arithmetic, 1, {}, kNone, 4, "{0}.sigmoid()", "{0}.sigmoid()", float_unary_rule},
    {OpId::Tanh, "tanh", OpKind::Arithmetic, 1, {}, kNone, 4, "{0}.tanh()", "{0}.tanh()", float_unary_rule},
    {OpId::Relu, "relu", OpKind::Arithmetic, 1, {}, kNone, 4, "{0}.relu()", "{0}.relu()", no_bool_rule},
    {OpId::Abs, "abs", OpKind::Arithmetic, 1, {}, kNone, 3, "{0}.abs()", "{0}.abs()", no_bool_rule},
    {OpId::Clamp, "clamp", OpKind::Arithmetic, 1, {A::Min, A::Max}, kNone, 3,
     "{0}.clamp({min}, {max})", "{0}.clamp({min}, {max})", clamp_rule},
    {OpId::Mm, "mm", OpKind::Arithmetic, 2, {}, kNone, 3, "{0}.mm({1})", "{0}.mm({1})", mm_rule},
    {OpId::Matmul, "matmul", OpKind::Arithmetic, 2, {}, kNone, 4, "{0}.matmul({1})", "{0}.matmul({1})", matmul_rule},
    {OpId::Sum, "sum", OpKind::Reduction, 1, {}, kNone, 8, "{0}.sum()", "{0}.sum()", sum_rule},
    {OpId::SumDims, "sum_dims", OpKind::Reduction, 1, {A::Dims, A::Keepdim}, kNone, 3,
     "{0}.sum({dims}, {keepdim})", "{0}.sum({dims}, keepdim={keepdim})", sum_dims_rule},
    {OpId::Mean, "mean", OpKind::Reduction, 1, {}, kNone, 4, "{0}.mean()", "{0}.mean()", mean_rule},
    {OpId::MeanDims, "mean_dims", OpKind::Reduction, 1, {A::Dims, A::Keepdim}, kNone, 2,
     "{0}.mean({dims}, {keepdim})", "{0}.mean({dims}, keepdim={keepdim})", mean_dims_rule},

    {OpId::Add_, "add_", OpKind::InPlace, 2, {}, kInPlace, 5, "{0}.add_({1})", "{0}.add_({1})", add__rule},
    {OpId::Sub_, "sub_", OpKind::InPlace, 2, {}, kInPlace, 2, "{0}.sub_({1})", "{0}.sub_({1})", sub__rule},
    {OpId::Mul_, "mul_", OpKind::InPlace, 2, {}, kInPlace, 5, "{0}.mul_({1})", "{0}.mul_({1})", mul__rule},
    {OpId::Div_, "div_", OpKind::InPlace, 2, {}, kInPlace, 2, "{0}.div_({1})", "{0}.div_({1})", div__rule},
    {OpId::AddScalar_, "add_scalar_", OpKind::InPlace, 1, {A::Scalar}, kInPlace, 4, "{0}.add_({scalar})", "{0}.add_({scalar})", add_s__rule},
    {OpId::SubScalar_, "sub_scalar_", OpKind::InPlace, 1, {A::Scalar}, kInPlace, 2, "{0}.sub_({scalar})", "{0}.sub_({scalar})", sub_s__rule},
    {OpId::MulScalar_, "mul_scalar_", OpKind::InPlace, 1, {A::Scalar}, kInPlace, 4, "{0}.mul_({scalar})", "{0}.mul_({scalar})", mul_s__rule},
    {OpId::DivScalar_, "div_scalar_", OpKind::InPlace, 1, {A::Scalar}, kInPlace, 2, "{0}.div_({scalar})", "{0}.div_({scalar})", div_s__rule},
    {OpId::Zero_, "zero_", OpKind::InPlace, 1, {}, kInPlace, 3, "{0}.zero_()", "{0}.zero_()", same_rule},
    {OpId::Fill_, "fill_", OpKind::InPlace, 1, {A::Scalar}, kInPlace, 3, "{0}.fill_({scalar})", "{0}.fill_({scalar})", same_rule},
    {OpId::Exp_, "exp_", OpKind::InPlace, 1, {}, kInPlace, 2, "{0}.exp_()", "{0}.exp_()", exp__rule},
    {OpId::Sigmoid_, "sigmoid_", OpKind::InPlace, 1, {}, kInPlace, 2, "{0}.sigmoid_()", "{0}.sigmoid_()", sigmoid__rule},
    {OpId::Tanh_, "tanh_", OpKind::InPlace, 1, {}, kInPlace, 2, "{0}.tanh_()", "{0}.tanh_()", tanh__rule},
    {OpId::Relu_, "relu_", OpKind::InPlace, 1, {}, kInPlace, 2, "{0}.relu_()", "{0}.relu_()", relu__rule},
    {OpId::Abs_, "abs_", OpKind::InPlace, 1, {}, kInPlace, 2, "{0}.abs_()", "{0}.abs_()", abs__rule},
    {OpId::Clamp_, "clamp_", OpKind::InPlace, 1, {A::Min, A::Max}, kInPlace, 2,
     "{0}.clamp_({min}, {max})", "{0}.clamp_({min}, {max})", clamp__rule},

    {OpId::Backward, "backward", OpKind::Autograd, 1, {A::RetainGraph}, kMutates | kNoValue | kBackward, 10,
     "{0}.backward(torch::Tensor(), {retain_graph})", "{0}.backward(retain_graph={retain_graph})", backward_rule},
    {OpId::BackwardGrad, "backward_grad", OpKind::Autograd, 2, {A::RetainGraph}, kMutates | kNoValue | kBackward, 4,
     "{0}.backward({1}, {retain_graph})",
     // LibTorch C++ sums a broadcastable gradient down to the root's shape; Python's backward() refuses any other
     // shape before reaching the engine, so the Python repro calls the engine as C++ does.
     "torch.autograd.Variable._execution_engine.run_backward(({0},), ({1},), {retain_graph}, False, (), allow_unreachable=True, accumulate_grad=True)",
     backward_grad_rule},
    {OpId::RetainGrad, "retain_grad", OpKind::Autograd, 1, {}, kMutates | kNoValue, 3,
     "{0}.retain_grad()", "{0}.retain_grad()", retain_grad_rule},
    {OpId::RequiresGrad_, "requires_grad_", OpKind::Autograd, 1, {A::RequiresGrad}, kMutates, 3,
     "{0}.requires_grad_({requires_grad})", "{0}.requires_grad_({requires_grad})", requires_grad__rule},
  };
  // clang-format on
  for (std::size_t i = 0; i < t.size(); ++i)
    PARITY_HARNESS_ASSERT(static_cast<std::size_t>(t[i].id) == i, "op table out of OpId order at " + std::string(t[i].name));
  return t;
}

}  // namespace

std::int64_t Meta::numel() const {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

DType promote(DType a, DType b) { return rank(a) >= rank(b) ? a : b; }

const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> table = build_table();
  return table;
}

const OpSpec& spec(OpId id) { return op_table()[static_cast<std::size_t>(id)]; }

std::optional<OpId> find_op(std::string_view name) {
  for (const auto& s : op_table())
    if (s.name == name) return s.id;
  return std::nullopt;
}

std::string_view attr_name(Attr a) {
  switch (a) {
    case Attr::Sizes: case Attr::ViewSizes: case Attr::ExpandSizes: return "sizes";
    case Attr::Strided: return "strided";
    case Attr::Dims: return "dims";
    case Attr::Dim: return "dim";
    case Attr::Dim1: return "dim1";
    case Attr::Start: return "start";
    case Attr::End: return "end";
    case Attr::Step: return "step";
    case Attr::Index: return "index";
    case Attr::Length: return "length";
    case Attr::Scalar: return "scalar";
    case Attr::MemoryFormat: return "memory_format";
    case Attr::DType: return "dtype";
    case Attr::RequiresGrad: return "requires_grad";
    case Attr::Keepdim: return "keepdim";
    case Attr::RetainGraph: return "retain_graph";
    case Attr::Seed: return "seed";
    case Attr::Offset: return "offset";
    case Attr::Min: return "min";
    case Attr::Max: return "max";
    case Attr::Size: return "size";
    case Attr::Chunks: return "chunks";
    case Attr::Copy: return "copy";
    case Attr::Memo: return "memo";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::int64_t storage_extent(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                            std::int64_t offset) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset;
    last += (sizes[i] - 1) * (i < strides.size() ? strides[i] : 0);
  }
  return offset + last + 1;
}

bool has_internal_overlap(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides) {
  std::int64_t total = 1;
  for (auto s : sizes) total *= s;
  if (total <= 1) return false;
  std::unordered_set<std::int64_t> seen;
  std::vector<std::int64_t> idx(sizes.size(), 0);
  for (std::int64_t k = 0; k < total; ++k) {
    std::int64_t addr = 0;
    for (std::size_t d = 0; d < sizes.size(); ++d) addr += idx[d] * strides[d];
    if (!seen.insert(addr).second) return true;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return false;
}

}  // namespace parity::program
