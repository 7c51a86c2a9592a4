#include "program/op_table.h"

#include <algorithm>
#include <limits>
#include <initializer_list>
#include <numeric>
#include <stdexcept>

#include "program/attr_spec.h"
#include "program/internal_assert.h"
#include "program/program.h"
#include "program/spelling.h"

namespace parity::program {
namespace {

using Metas = std::span<const Meta>;
using Out = std::optional<Meta>;

int rank(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::Int32: return 1;
    case DType::Int64: return 2;
    case DType::Float16:
    case DType::BFloat16: return 3;
    case DType::Float32: return 4;
    case DType::Float64: return 5;
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

// The tensors' common dtype: dimensioned ones promote together, zero-dim ones together, then combine.
DType tensor_result_type(std::initializer_list<const Meta*> tensors) {
  std::optional<DType> dimensioned, zero_dim;
  for (const Meta* t : tensors) {
    auto& cls = t->sizes.empty() ? zero_dim : dimensioned;
    cls = cls ? promote(*cls, t->dtype) : t->dtype;
  }
  return dimensioned ? combine(*dimensioned, zero_dim) : *zero_dim;
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
// torch.tensor of a literal list: Python stores each element with c10::checked_convert into an integral dtype,
// which refuses NaN and what lies past the dtype's range; a float dtype takes any number (past its range, as
// infinity) and bool any. At the top of the range releases differ (impl's FloatToIntegralRangeIsExact): what
// either refuses counts as refused.
Out literal_rule(Metas m, const Attrs& a) {
  auto fits = [&](const Scalar& e) {
    if (a.dtype == DType::Int64) return e.value >= -0x1p63 && e.value < 0x1p63;
    if (a.dtype == DType::Int32) return e.value >= -0x1p31 && e.value <= 0x1p31 - 1;
    return true;
  };
  if (!std::ranges::all_of(a.elements, fits)) return std::nullopt;
  return fresh(m, a);
}
Out rand_rule(Metas m, const Attrs& a) {
  if (a.sizes.size() != a.strides.size() || a.offset < 0) return std::nullopt;
  return fresh(m, a);
}
Out empty_memory_format_rule(Metas m, const Attrs& a) {
  // preserve_format has nothing to preserve here: empty refuses it.
  if (a.memory_format == MemoryFormat::Preserve || !format_fits(a.memory_format, a.sizes.size())) return std::nullopt;
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
// Sampling (uniform_, normal_) exists for floating dtypes only.
Out floating_like_rule(Metas m, const Attrs& a) {
  if (!is_floating(m[0].dtype)) return std::nullopt;
  return like_rule(m, a);
}
// random_(0, high): high above 0, and high - 1 within the dtype (bool's 1, int32's 2^31 - 1, float16's 65504).
Out randint_like_rule(Metas m, const Attrs& a) {
  const std::int64_t largest = m[0].dtype == DType::Bool      ? 1
                               : m[0].dtype == DType::Int32   ? 2147483647
                               : m[0].dtype == DType::Float16 ? 65504
                                                              : std::numeric_limits<std::int64_t>::max();
  if (a.high <= 0 || a.high - 1 > largest) return std::nullopt;
  return like_rule(m, a);
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
  DType t = tensor_result_type({&m[0], &m[1]});
  if (op == OpId::Sub && (m[0].dtype == DType::Bool || m[1].dtype == DType::Bool)) return std::nullopt;
  if (op == OpId::Div && !is_floating(t)) t = DType::Float32;
  return Meta{*b, t, m[0].requires_grad || m[1].requires_grad};
}
Out where_rule(Metas m, const Attrs&) {
  if (m[0].dtype != DType::Bool) return std::nullopt;
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b) return std::nullopt;
  b = broadcast(*b, m[2].sizes);
  if (!b) return std::nullopt;
  return Meta{*b, tensor_result_type({&m[1], &m[2]}), m[1].requires_grad || m[2].requires_grad};
}
// masked_fill: a bool mask broadcast with self; self's dtype.
Out masked_fill_rule(Metas m, const Attrs&) {
  if (m[1].dtype != DType::Bool) return std::nullopt;
  auto b = broadcast(m[1].sizes, m[0].sizes);
  if (!b) return std::nullopt;
  return Meta{*b, m[0].dtype, m[0].requires_grad};
}
// addcmul: the three tensors' common dtype (dimensioned ones outrank zero-dim ones), never bool.
Out addcmul_rule(Metas m, const Attrs&) {
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b) return std::nullopt;
  b = broadcast(*b, m[2].sizes);
  if (!b) return std::nullopt;
  const DType t = tensor_result_type({&m[0], &m[1], &m[2]});
  if (t == DType::Bool) return std::nullopt;
  return Meta{*b, t, m[0].requires_grad || m[1].requires_grad || m[2].requires_grad};
}
// index with one index tensor on the leading dims: an int64 index replaces dim 0 by its shape. A mask's result
// has as many rows as the mask has true elements, which the generator cannot know: it refuses to model it.
Out index_rule(Metas m, const Attrs&) {
  if (m[1].dtype != DType::Int64 || m[0].sizes.empty()) return std::nullopt;
  Meta out{m[1].sizes, m[0].dtype, m[0].requires_grad};
  out.sizes.insert(out.sizes.end(), m[0].sizes.begin() + 1, m[0].sizes.end());
  return out;
}
// index_put: self's shape and dtype; values of self's dtype, expandable to the indexed shape (an int64 index's
// shape, or for a mask an unknown count, so values must not reach into the mask's dims).
Out index_put_rule(Metas m, const Attrs&) {
  const Meta& self = m[0];
  const Meta& idx = m[1];
  const Meta& values = m[2];
  if (values.dtype != self.dtype) return std::nullopt;
  std::vector<std::int64_t> indexed;
  std::size_t covered = 1;
  if (idx.dtype == DType::Int64) {
    if (self.sizes.empty()) return std::nullopt;
    indexed = idx.sizes;
  } else if (idx.dtype == DType::Bool) {
    covered = idx.sizes.size();
    if (covered > self.sizes.size() || !std::equal(idx.sizes.begin(), idx.sizes.end(), self.sizes.begin()))
      return std::nullopt;
    if (values.sizes.size() > self.sizes.size() - covered && values.numel() != 1) return std::nullopt;
  } else {
    return std::nullopt;
  }
  indexed.insert(indexed.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(covered), self.sizes.end());
  auto b = broadcast(values.sizes, indexed);
  if (values.numel() != 1 && (!b || *b != indexed)) return std::nullopt;
  return Meta{self.sizes, self.dtype, self.requires_grad || values.requires_grad};
}
Out compare_rule(Metas m, const Attrs&) {
  auto b = broadcast(m[0].sizes, m[1].sizes);
  if (!b) return std::nullopt;
  return Meta{*b, DType::Bool, false};
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
Out split_with_sizes_rule(Metas m, const Attrs& a) {
  auto d = wrap_dim(a.dim, m[0].sizes.size());
  if (m[0].sizes.empty() || !d || a.index < 0 || a.index >= static_cast<std::int64_t>(a.dims.size())) return std::nullopt;
  std::int64_t total = 0;
  for (auto length : a.dims) {
    if (length < 0) return std::nullopt;
    total += length;
  }
  if (total != m[0].sizes[*d]) return std::nullopt;
  Meta out = m[0];
  out.sizes[*d] = a.dims[static_cast<std::size_t>(a.index)];
  return out;
}
Out data_rule(Metas m, const Attrs&) { return Meta{m[0].sizes, m[0].dtype, false}; }
Out to_memory_format_rule(Metas m, const Attrs& a) {
  if (!format_fits(a.memory_format, m[0].sizes.size())) return std::nullopt;
  return m[0];
}
Out to_rule(Metas m, const Attrs& a) {
  if (a.dtype == m[0].dtype && !a.copy) return m[0];
  return Meta{m[0].sizes, a.dtype, m[0].requires_grad && is_floating(a.dtype)};
}
Out to_dtype_memory_format_rule(Metas m, const Attrs& a) {
  if (!format_fits(a.memory_format, m[0].sizes.size())) return std::nullopt;
  return to_rule(m, a);
}
// Devices are not in Meta: the values (and requires_grad, which the copy keeps through ToCopyBackward0) stay.
Out to_device_rule(Metas m, const Attrs&) { return m[0]; }
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
Out same_rule(Metas m, const Attrs&) { return m[0]; }
// autograd.grad of a one-element output: a gradient of the input's shape and dtype, outside any graph.
// With create_graph the gradient has history wherever its formulas read a tensor requiring grad: taken as so.
Out autograd_grad_rule(Metas m, const Attrs& a) {
  if (!m[0].requires_grad || m[0].numel() != 1 || !m[1].requires_grad) return std::nullopt;
  return Meta{m[1].sizes, m[1].dtype, a.create_graph};
}
// ... with grad_outputs: a gradient the output's shape broadcasts to (summed down, as backward_grad's).
Out autograd_grad_outputs_rule(Metas m, const Attrs& a) {
  if (!m[0].requires_grad || !m[1].requires_grad) return std::nullopt;
  auto b = broadcast(m[0].sizes, m[2].sizes);
  if (!b || *b != m[2].sizes) return std::nullopt;
  return Meta{m[1].sizes, m[1].dtype, a.create_graph};
}
Out backward_rule(Metas m, const Attrs&) {
  if (!m[0].requires_grad || m[0].numel() != 1) return std::nullopt;
  return Meta{};
}
Out backward_roots_rule(Metas m, const Attrs&) {
  for (const Meta& root : m)
    if (!root.requires_grad || root.numel() != 1) return std::nullopt;
  return Meta{};
}
Out retain_grad_rule(Metas m, const Attrs&) {
  if (!m[0].requires_grad) return std::nullopt;
  return Meta{};
}
Out grad_rule(Metas m, const Attrs&) { return Meta{m[0].sizes, m[0].dtype, false}; }
// Well-typed: a gradient of the tensor's own shape and dtype (the C++ API checks neither; backward then may).
Out set_grad_rule(Metas m, const Attrs&) {
  if (m[1].sizes != m[0].sizes || m[1].dtype != m[0].dtype) return std::nullopt;
  return Meta{};
}
Out reset_grad_rule(Metas, const Attrs&) { return Meta{}; }
// One value requiring grad written through a bool mask into a non-floating tensor: LibTorch 1.13 goes through
// masked_fill_ without its dtype check and gives that tensor a grad_fn, which no tensor of its dtype may have;
// the next op to give it history fails LibTorch's own INTERNAL ASSERT (isDifferentiableType). Its state is
// broken from there on, so such a step is never made (2.x raises a dtype error at the write).
// Values requiring grad written through a 0-dim bool mask: the write may succeed (one value goes through
// masked_fill_), but the values' gradient, grad.index(mask), meets the ledgered INTERNAL ASSERT of LibTorch 1.13's
// index for a 0-dim mask (index:status:internal_assert) inside whichever backward runs it, under a signature no
// narrow ledger entry can name; such a step is not made either.
bool index_put_undefined(Metas m, const Attrs&) {
  if (m[1].dtype == DType::Bool && m[1].sizes.empty() && m[2].requires_grad) return true;
  return m[1].dtype == DType::Bool && m[2].numel() == 1 && m[2].requires_grad && !is_floating(m[0].dtype);
}
// Well-typed: data that a tensor requiring grad may hold (floating).
Out set_data_rule(Metas m, const Attrs&) {
  if (m[0].requires_grad && !is_floating(m[1].dtype)) return std::nullopt;
  return Meta{};
}
// Fewer dims for a tensor requiring grad: a gradient its old accumulator still receives has more dims than the
// tensor, and LibTorch 1.13's obeys_layout_contract reads past the tensor's strides.
bool set_data_undefined(Metas m, const Attrs&) { return m[0].requires_grad && m[1].sizes.size() < m[0].sizes.size(); }
Out requires_grad__rule(Metas m, const Attrs& a) {
  if (a.requires_grad && !is_floating(m[0].dtype)) return std::nullopt;
  Meta out = m[0];
  out.requires_grad = a.requires_grad;
  return out;
}

// ---- run-time refusals (OpSpec::refuses) and overlap rules (OpSpec::overlaps)
bool refuses_view(const OperandState& s, const Attrs&) { return s.view; }  // "Can't detach views in-place"
bool refuses_nonleaf(const OperandState& s, const Attrs&) { return !s.leaf; }
bool refuses_unflag_nonleaf(const OperandState& s, const Attrs& a) { return !a.requires_grad && !s.leaf; }
bool refuses_past_storage(const OperandState& s, const Attrs& a) {
  return storage_extent(a.sizes, a.strides, a.offset) > s.storage_numel;
}
bool strided_overlaps(const Meta&, const Meta&, const Attrs& a) { return has_internal_overlap(a.sizes, a.strides); }
// A dim of size 1 expanded to more repeats its elements.
bool expand_overlaps(const Meta& in, const Meta& out, const Attrs&) {
  const std::size_t lead = out.sizes.size() - in.sizes.size();
  for (std::size_t i = 0; i < out.sizes.size(); ++i) {
    const std::int64_t was = i < lead ? 1 : in.sizes[i - lead];
    if (was == 1 && out.sizes[i] > 1) return true;
  }
  return false;
}
// Windows that overlap share elements.
bool unfold_overlaps(const Meta& in, const Meta& out, const Attrs& a) {
  if (a.step >= a.size || out.numel() == 0) return false;
  const auto nd = static_cast<std::int64_t>(in.sizes.size());
  const std::int64_t dim = a.dim < 0 ? a.dim + nd : a.dim;
  return out.sizes[static_cast<std::size_t>(dim)] > 1;
}
bool to_is_noop(const Meta& in, const Attrs& a) { return a.dtype == in.dtype && !a.copy; }

using A = Attr;

OpSpec entry(OpId id, OpSpec s) {
  s.id = id;
  return s;
}

std::vector<OpSpec> build_table() {
  std::vector<OpSpec> t = {
#define PARITY_OP(id, ...) entry(OpId::id, OpSpec __VA_ARGS__),
#include "program/ops.def"
#undef PARITY_OP
  };
  for (OpSpec& s : t) {
    if (s.is_inplace()) {
      s.mutates = true;
      s.result = ResultIs::Operand;
    }
    if (s.kind == OpKind::Factory) s.leaf_result = true;
    if (s.out_of) {
      // An out= form computes what its op computes, into operand 0, and records no history.
      const OpSpec& of = t[static_cast<std::size_t>(*s.out_of)];
      PARITY_HARNESS_ASSERT(s.is_inplace() && !s.rule && !s.inplace_of && of.rule && s.arity == of.arity + 1 &&
                                s.attrs == of.attrs && s.writes == Writes::Result,
                            "out= op " + std::string(s.name) + " must be in place, write Writes::Result and take " +
                                std::string(of.name) + "'s operands (after out) and attributes, and no shape rule");
      s.rounds = of.rounds;
      s.amplifies_rounding = of.amplifies_rounding;
      continue;
    }
    if (!s.inplace_of) continue;
    // An in-place form computes what its out-of-place op computes, so it saves, rounds and accepts the same.
    const OpSpec& of = t[static_cast<std::size_t>(*s.inplace_of)];
    PARITY_HARNESS_ASSERT(!s.rule && of.rule && !of.inplace_of && s.arity == of.arity && s.attrs == of.attrs,
                          "in-place op " + std::string(s.name) + " must take the operands and attributes of " +
                              std::string(of.name) + " and no shape rule of its own");
    s.saves = of.saves;
    s.rounds = of.rounds;
    s.amplifies_rounding = of.amplifies_rounding;
    s.operand0 = of.operand0;
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    PARITY_HARNESS_ASSERT(t[i].rule || t[i].inplace_of || t[i].out_of, "op " + std::string(t[i].name) + " has no shape rule");
    PARITY_HARNESS_ASSERT(static_cast<std::size_t>(t[i].id) == i, "op table out of OpId order at " + std::string(t[i].name));
  }
  return t;
}

}  // namespace

std::int64_t Meta::numel() const {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

// float16 and bfloat16 share a rank: neither holds the other, and c10 promotes them together to float32.
DType promote(DType a, DType b) {
  if (a != b && rank(a) == rank(b)) return DType::Float32;
  return rank(a) >= rank(b) ? a : b;
}

std::optional<Meta> OpSpec::infer(std::span<const Meta> in, const Attrs& a) const {
  if (out_of) {
    // Operand 0 takes the result's shape (resized) and keeps its dtype and flag.
    auto r = spec(*out_of).rule(in.subspan(1), a);
    if (!r || !(out_dtype_exact ? r->dtype == in[0].dtype : can_cast(r->dtype, in[0].dtype))) return std::nullopt;
    return Meta{r->sizes, in[0].dtype, in[0].requires_grad};
  }
  if (!inplace_of) return rule(in, a);
  // The result must keep operand 0's shape and be castable to its dtype; operand 0 keeps its dtype.
  auto r = spec(*inplace_of).rule(in, a);
  if (!r || r->sizes != in[0].sizes || !can_cast(r->dtype, in[0].dtype)) return std::nullopt;
  return Meta{in[0].sizes, in[0].dtype, r->requires_grad};
}

bool OpSpec::reads(Attr a) const { return std::find(attrs.begin(), attrs.end(), a) != attrs.end(); }

const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> table = build_table();
  return table;
}

const OpSpec& spec(OpId id) { return op_table()[static_cast<std::size_t>(id)]; }

bool records_history(const OpSpec& op) {
  if (op.kind == OpKind::Factory || op.kind == OpKind::Autograd || op.leaf_result || !op.has_value()) return false;
  if (op.result == ResultIs::Alias || op.id == OpId::Detach_ || op.id == OpId::NewTensor) return false;
  return !op.out_of;  // out= forms record no history
}

bool out_refuses_grad(const OpSpec& op) { return op.out_of && !spec(*op.out_of).leaf_result; }

bool double_backward(OpId id) {
  const OpSpec& op = spec(id);
  return op.double_backward && (!op.inplace_of || spec(*op.inplace_of).double_backward);
}

std::optional<OpId> find_op(std::string_view name) {
  for (const auto& s : op_table())
    if (s.name == name) return s.id;
  return std::nullopt;
}

std::string op_name_hint(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& s : op_table()) names.emplace_back(s.name);
  return did_you_mean(name, names);
}

std::string_view to_string(OpKind k) {
  switch (k) {
    case OpKind::Factory: return "factory";
    case OpKind::Copy: return "copy";
    case OpKind::View: return "view";
    case OpKind::Arithmetic: return "arithmetic";
    case OpKind::Reduction: return "reduction";
    case OpKind::InPlace: return "inplace";
    case OpKind::Autograd: return "autograd";
  }
  PARITY_HARNESS_UNREACHABLE("OpKind " + std::to_string(static_cast<int>(k)));
}

std::string_view attr_name(Attr a) { return attr_spec(a).name; }

std::vector<std::string_view> attr_json_keys(Attr a) {
  if (attr_spec(a).type == AttrType::Strided) return {"sizes", "strides", "offset"};
  return {attr_name(a)};
}

}  // namespace parity::program
