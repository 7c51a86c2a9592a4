#include "generators/attr_gen.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "generators/boundary_values.h"
#include "generators/layout_gen.h"
#include "program/internal_assert.h"
#include "program/json.h"

namespace parity::generators {

using program::Attr;
using program::Attrs;
using program::DType;
using program::Meta;
using program::MemoryFormat;
using program::OpId;
using program::Scalar;

namespace {

std::int64_t ndim_of(std::span<const Meta> in) {
  return in.empty() ? 0 : static_cast<std::int64_t>(in[0].sizes.size());
}

// A dim index in range for `ndim` dims (a 0-d tensor accepts 0 and -1), negative a fifth of the time.
std::int64_t any_dim(Rng& rng, std::int64_t ndim) {
  std::int64_t n = std::max<std::int64_t>(ndim, 1);
  std::int64_t d = rng.below(n);
  return rng.chance(0.2) ? d - n : d;
}

std::int64_t size_at(std::span<const Meta> in, std::int64_t dim) {
  const auto& s = in[0].sizes;
  if (s.empty()) return 1;
  std::int64_t n = static_cast<std::int64_t>(s.size());
  return s[static_cast<std::size_t>(dim < 0 ? dim + n : dim)];
}

std::vector<std::int64_t> prime_factors(std::int64_t n) {
  std::vector<std::int64_t> f;
  for (std::int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n > 1) f.push_back(n);
  return f;
}

// Another shape with the same number of elements, sometimes with one dim left to infer (-1).
std::vector<std::int64_t> view_sizes(Rng& rng, const std::vector<std::int64_t>& in) {
  std::int64_t n = 1;
  for (auto s : in) n *= s;
  if (rng.chance(0.1)) return in;
  if (n == 0) {
    // An empty tensor views as any shape holding a 0; -1 is ambiguous there and raises.
    std::vector<std::int64_t> out = random_sizes(rng, static_cast<int>(rng.range(1, 3)), 6);
    out[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(out.size())))] = 0;
    return out;
  }
  if (rng.chance(0.12)) return {-1};
  int ndim = static_cast<int>(rng.range(n == 1 ? 0 : 1, 4));
  if (ndim == 0) return {};
  std::vector<std::int64_t> out(static_cast<std::size_t>(ndim), 1);
  for (auto p : prime_factors(n)) out[static_cast<std::size_t>(rng.below(ndim))] *= p;
  if (rng.chance(0.3)) out[static_cast<std::size_t>(rng.below(ndim))] = -1;
  return out;
}

std::vector<std::int64_t> expand_sizes(Rng& rng, const std::vector<std::int64_t>& in) {
  std::vector<std::int64_t> out;
  std::int64_t lead = rng.chance(0.35) ? rng.range(1, 2) : 0;
  std::int64_t total = 1;
  for (std::int64_t i = 0; i < lead; ++i) {
    out.push_back(rng.range(1, 3));
    total *= out.back();
  }
  for (auto s : in) total *= s;
  for (auto s : in) {
    if (s == 1 && rng.chance(0.6) && total * 3 <= 96) {
      std::int64_t e = rng.range(2, 3);
      total *= e;
      out.push_back(e);
    } else {
      out.push_back(rng.chance(0.25) ? -1 : s);
    }
  }
  return out;
}

// Stored where the value lands in elements as it is: a factory's fill value, fill_'s and masked_fill_'s, and
// that of an out-of-place op whose in-place form is such a write (masked_fill).
ScalarUse scalar_use(OpId op) {
  auto writes_it = [](const program::OpSpec& o) { return program::writes_one_value(o.writes); };
  const program::OpSpec& spec = program::spec(op);
  const auto& table = program::op_table();
  const bool stored = spec.kind == program::OpKind::Factory || writes_it(spec) ||
                      std::any_of(table.begin(), table.end(),
                                  [&](const program::OpSpec& o) { return o.inplace_of == op && writes_it(o); });
  return stored ? ScalarUse::Stored : ScalarUse::Computed;
}

// The small range, [program::kSmallScalarLow, program::kSmallScalarHigh]: no value of it is an edge
// (program::is_edge_scalar).
double small_value(Rng& rng, Scalar::Kind kind) {
  switch (kind) {
    case Scalar::Kind::Int: return static_cast<double>(rng.pick({0, 1, -1, 2, -2, 3}));
    case Scalar::Kind::Float: return rng.pick({0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, 3.0, -0.25});
    case Scalar::Kind::Bool: return static_cast<double>(rng.below(2));
  }
  PARITY_HARNESS_UNREACHABLE("no case for this Scalar::Kind");
}

// `edge`: always one of the dtype's edges (a mutation asking for one), never the small range.
Scalar random_scalar(Rng& rng, OpId op, std::span<const Meta> in, bool edge = false) {
  Scalar s;
  const DType target = in.empty() ? DType::Float32 : in[0].dtype;
  if (op == OpId::Pow) {
    static const double w[] = {5, 4, 1};
    s.kind = static_cast<Scalar::Kind>(rng.weighted(w) == 0 ? 1 : 0);  // Float or Int
  } else {
    // In-place ops cannot change their operand's dtype: pick a scalar kind the operand can absorb.
    const bool inplace = program::spec(op).kind == program::OpKind::InPlace && !in.empty();
    static const double w[] = {4, 5, 1};  // Int, Float, Bool
    int k = rng.weighted(w);
    if (inplace && !program::is_floating(target)) k = target == DType::Bool ? 2 : rng.pick({0, 0, 2});
    s.kind = static_cast<Scalar::Kind>(k);
  }
  if (edge || rng.chance(kBoundaryScalarShare)) {
    const ScalarUse use = scalar_use(op);
    // A float tensor computes with no integer edge (ScalarUse): its edge is a float one.
    if (use == ScalarUse::Computed && program::is_floating(target) && s.kind == Scalar::Kind::Int)
      s.kind = Scalar::Kind::Float;
    s.value = boundary_value(rng, s.kind, target, use);
    return s;
  }
  if (op == OpId::Pow) {
    s.value = s.kind == Scalar::Kind::Int ? static_cast<double>(rng.pick({0, 1, 2, 3, -1, 2}))
                                          : rng.pick({2.0, 0.5, -1.0, 3.0, 0.0, 1.0, -0.5, 1.5});
    return s;
  }
  s.value = small_value(rng, s.kind);
  return s;
}

// One element of a literal list for a tensor of `dtype`: mostly of the dtype's own kind, now and then another
// (a Python int or bool in a float list, a float in an int one) or, in a float list, an edge. The list's elements
// meet in whatever later steps compute, where a large finite one beside small ones would make a sum's order decide
// the result (and a float copy of an int list is such a list): so an edge is one that stays exact there, as a
// computed scalar's (ScalarUse::Computed: ±0, ±inf, NaN, one past the range), and an int list has none (spoil_elements
// gives it the values it refuses).
Scalar literal_element(Rng& rng, DType dtype) {
  const bool floating = program::is_floating(dtype), boolean = dtype == DType::Bool;
  const double w[] = {floating ? 2.0 : boolean ? 1.0 : 6.0, floating ? 6.0 : boolean ? 1.0 : 2.0, boolean ? 6.0 : 1.0};
  Scalar e{static_cast<Scalar::Kind>(rng.weighted(w)), 0};
  if (floating && rng.chance(kBoundaryScalarShare)) {
    e.kind = Scalar::Kind::Float;
    e.value = boundary_value(rng, e.kind, dtype, ScalarUse::Computed);
  } else {
    e.value = small_value(rng, e.kind);
  }
  return e;
}

DType random_dtype(Rng& rng, OpId op) {
  static const double w[] = {55, 20, 15, 10, 8, 8, 8};  // Float32, Float64, Int64, Bool, Int32, Float16, BFloat16
  static const double w_arange[] = {55, 20, 25, 0, 10, 5, 5};
  return program::kAllDTypes[std::max(rng.weighted(op == OpId::Arange ? w_arange : w), 0)];
}

MemoryFormat random_memory_format(Rng& rng, OpId op, std::int64_t ndim) {
  // contiguous() and empty() refuse preserve_format.
  const bool preserve_ok = op != OpId::Contiguous && op != OpId::EmptyMemoryFormat;
  std::vector<double> w = {25, ndim == 4 ? 30.0 : 0.0, ndim == 5 ? 30.0 : 0.0, preserve_ok ? 35.0 : 0.0};
  return program::kAllMemoryFormats[std::max(rng.weighted(w), 0)];
}

// What an attribute's rules see: the op, its operands (nd: operand 0's dims) and, in the Attrs they write, the
// attributes drawn before theirs (start reads dim, index reads size and chunks, ...).
struct Draw {
  Rng& rng;
  OpId op;
  const program::OpSpec& spec;
  std::span<const Meta> in;
  std::int64_t nd;
  std::int64_t storage_numel;  // as_strided's views stay within it
  bool cuda;                   // devices are drawn
};
using Rule = void (*)(Draw&, Attrs&);

// Which split an op is, by the attribute that sizes its pieces (the op table's facts, not a list of ops):
// split and unsafe_split by a size, chunk and unsafe_chunk by a count, split_with_sizes and its unsafe_ form by
// a list of lengths.
bool splits_by_size(const Draw& d) { return d.spec.multi_output && d.spec.reads(Attr::Size); }
bool splits_by_chunks(const Draw& d) { return d.spec.multi_output && d.spec.reads(Attr::Chunks); }
bool splits_by_lengths(const Draw& d) { return d.spec.multi_output && d.spec.reads(Attr::SplitSizes); }

// ---- drawing a valid value, one rule per attribute (program/attrs.def names each)

// Now and then a factory's shape is at the element cap a program may hold (program::kMaxNumel) or just below it,
// in one to five dims: where LibTorch splits its work among threads and vector lanes and reduces in chunks
// (at::internal::GRAIN_SIZE, cascade sums), and where parity's own limits (summarised values, the JSON reader's
// cap) hold. Rare: a case over a million elements costs hundreds of small ones.
std::vector<std::int64_t> cap_shape(Rng& rng) {
  constexpr std::int64_t cap = program::kMaxNumel;
  return rng.pick(std::vector<std::vector<std::int64_t>>{
      {cap}, {cap - 1}, {1024, cap / 1024}, {3, cap / 3}, {1, cap}, {16, 16, 64, cap / 16384}, {4, 16, 16, 32, cap / 32768}});
}

void draw_sizes(Draw& d, Attrs& a) { a.sizes = d.rng.chance(kCapShapeShare) ? cap_shape(d.rng) : random_shape(d.rng); }
void draw_view_sizes(Draw& d, Attrs& a) { a.sizes = view_sizes(d.rng, d.in[0].sizes); }
void draw_expand_sizes(Draw& d, Attrs& a) { a.sizes = expand_sizes(d.rng, d.in[0].sizes); }

void draw_strided(Draw& d, Attrs& a) {
  LayoutSpec l = d.op == OpId::AsStrided ? random_view_within(d.rng, d.storage_numel) : random_layout(d.rng);
  a.sizes = l.sizes;
  a.strides = l.strides;
  a.offset = l.offset;
}

// A permutation (permute), or a subset of the dims in any order (reductions).
void draw_dims(Draw& d, Attrs& a) {
  const std::int64_t nd = d.nd;
  if (d.op == OpId::Permute) {
    a.dims.resize(static_cast<std::size_t>(nd));
    std::iota(a.dims.begin(), a.dims.end(), 0);
    d.rng.shuffle(a.dims);
    for (auto& dim : a.dims)
      if (d.rng.chance(0.15)) dim -= nd;
  } else if (nd == 0) {
    a.dims = d.rng.pick(std::vector<std::vector<std::int64_t>>{{}, {0}, {-1}});
  } else {
    for (std::int64_t i = 0; i < nd; ++i)
      if (d.rng.chance(0.5)) a.dims.push_back(d.rng.chance(0.2) ? i - nd : i);
    if (a.dims.empty() && d.rng.chance(0.7)) a.dims.push_back(d.rng.below(nd));
    d.rng.shuffle(a.dims);
  }
}

void draw_dim(Draw& d, Attrs& a) {
  const std::int64_t nd = d.nd;
  if (d.op == OpId::Unsqueeze) {
    a.dim = d.rng.range(-(nd + 1), nd);
  } else if (d.op == OpId::Select && nd > 0) {
    // select needs a dim of nonzero size
    std::vector<std::int64_t> ok;
    for (std::int64_t i = 0; i < nd; ++i)
      if (d.in[0].sizes[static_cast<std::size_t>(i)] > 0) ok.push_back(i);
    a.dim = ok.empty() ? 0 : d.rng.pick(ok);
    if (d.rng.chance(0.2)) a.dim -= nd;
  } else {
    a.dim = any_dim(d.rng, nd);
  }
}

void draw_dim1(Draw& d, Attrs& a) { a.dim1 = any_dim(d.rng, d.nd); }

void draw_start(Draw& d, Attrs& a) {
  std::int64_t n = size_at(d.in, a.dim);
  a.start = d.op == OpId::Narrow ? d.rng.range(-n, n)
                                 : (d.rng.chance(0.15) ? d.rng.range(-n - 1, -1) : d.rng.range(0, n));
}

void draw_end(Draw& d, Attrs& a) {
  if (d.op == OpId::Arange) {
    a.end = d.rng.chance(kCapShapeShare) ? program::kMaxNumel - d.rng.below(2) : d.rng.range(0, 12);
    return;
  }
  std::int64_t n = size_at(d.in, a.dim);
  switch (d.rng.below(4)) {
    case 0: a.end = n; break;
    case 1: a.end = d.rng.range(-n, n); break;
    case 2: a.end = n + d.rng.range(1, 50); break;  // past the end: clamped
    default: a.end = std::min(n, std::max<std::int64_t>(a.start, 0) + d.rng.range(0, 3)); break;
  }
}

void draw_step(Draw& d, Attrs& a) { a.step = d.rng.pick({1, 1, 2, 3}); }

// Which output of a multi-output op to keep, or select's index.
void draw_index(Draw& d, Attrs& a) {
  std::int64_t n = size_at(d.in, a.dim);
  const bool by_size = splits_by_size(d);
  const bool by_chunks = splits_by_chunks(d);
  if (splits_by_lengths(d)) {
    a.index = d.rng.range(0, std::max<std::int64_t>(static_cast<std::int64_t>(a.dims.size()), 1) - 1);
  } else if (by_size || by_chunks) {
    // One of the pieces LibTorch makes (chunk of an empty dim makes `chunks`).
    std::int64_t piece = by_size ? a.size : (n + a.chunks - 1) / std::max<std::int64_t>(a.chunks, 1);
    std::int64_t count = n == 0 ? (by_chunks ? a.chunks : 1) : (n + piece - 1) / std::max<std::int64_t>(piece, 1);
    a.index = d.rng.range(0, std::max<std::int64_t>(count, 1) - 1);
  } else if (d.op == OpId::Unbind) {
    a.index = d.rng.range(0, std::max<std::int64_t>(n, 1) - 1);
  } else {
    a.index = n > 0 ? d.rng.range(-n, n - 1) : 0;
  }
}

void draw_length(Draw& d, Attrs& a) {
  std::int64_t n = size_at(d.in, a.dim);
  std::int64_t s = a.start < 0 ? a.start + n : a.start;
  a.length = d.rng.range(0, std::max<std::int64_t>(n - s, 0));
}

void draw_scalar(Draw& d, Attrs& a) { a.scalar = random_scalar(d.rng, d.op, d.in); }

void draw_memory_format(Draw& d, Attrs& a) {
  // A factory's format is for the sizes it was just given.
  const std::int64_t nd = d.spec.arity == 0 ? static_cast<std::int64_t>(a.sizes.size()) : d.nd;
  a.memory_format = random_memory_format(d.rng, d.op, nd);
}

void draw_dtype(Draw& d, Attrs& a) { a.dtype = random_dtype(d.rng, d.op); }

void draw_requires_grad(Draw& d, Attrs& a) {
  if (d.op == OpId::RequiresGrad_) a.requires_grad = program::is_floating(d.in[0].dtype) && d.rng.chance(0.75);
  else a.requires_grad = program::is_floating(a.dtype) && d.rng.chance(d.op == OpId::Rand ? 0.6 : 0.4);
}

// A literal list as a test writes one: up to three levels of a few elements, now and then an empty one.
void draw_literal_sizes(Draw& d, Attrs& a) {
  a.sizes = random_sizes(d.rng, static_cast<int>(d.rng.range(0, 3)), 12);
  if (!a.sizes.empty() && d.rng.chance(0.05)) a.sizes.back() = 0;
}

void draw_elements(Draw& d, Attrs& a) {
  std::int64_t n = 1;
  for (auto s : a.sizes) n *= s;
  a.elements.clear();
  for (std::int64_t i = 0; i < n; ++i) a.elements.push_back(literal_element(d.rng, a.dtype));
}

void draw_keepdim(Draw& d, Attrs& a) { a.keepdim = d.rng.chance(0.4); }
void draw_retain_graph(Draw& d, Attrs& a) { a.retain_graph = d.rng.chance(0.35); }
void draw_seed(Draw& d, Attrs& a) { a.seed = d.rng.next() & 0xffffffffULL; }
// Mostly small; now and then where a dtype's range ends: 65505 (float16's largest 65504 is high - 1), 2^31
// (int32's), and one past them.
void draw_high(Draw& d, Attrs& a) {
  a.high = d.rng.chance(0.9) ? d.rng.pick({1, 2, 3, 5, 10, 1000})
                             : d.rng.pick<std::int64_t>({65505, 65506, 2147483648LL, 2147483649LL, 4611686018427387904LL});
}

void draw_offset(Draw& d, Attrs& a) { a.offset = d.rng.pick({0, 0, 1, -1, 2}); }

// clamp's bounds: both (crossed ones too), or one of them; never neither (that is the ill-typed case).
void draw_bounds(Draw& d, Attrs& a) {
  const int which = d.rng.below(4);  // 0, 1: both; 2: min only; 3: max only
  if (which != 3) a.min = random_scalar(d.rng, d.op, d.in);
  if (which != 2) a.max = random_scalar(d.rng, d.op, d.in);
}
void drawn_with_min(Draw&, Attrs&) {}

void draw_size(Draw& d, Attrs& a) {
  std::int64_t n = size_at(d.in, a.dim);
  a.size = splits_by_size(d) ? (n == 0 ? d.rng.range(0, 2) : d.rng.range(1, n)) : d.rng.range(0, n);
}

void draw_chunks(Draw& d, Attrs& a) { a.chunks = d.rng.range(1, 4); }
void draw_copy(Draw& d, Attrs& a) { a.copy = d.rng.chance(0.6); }
void draw_accumulate(Draw& d, Attrs& a) { a.accumulate = d.rng.chance(0.5); }
void draw_allow_unused(Draw& d, Attrs& a) { a.allow_unused = d.rng.chance(0.4); }
void draw_create_graph(Draw& d, Attrs& a) { a.create_graph = d.rng.chance(0.25); }

// Mostly cuda, some cpu: operands on two devices are what the device rules are about.
void draw_device(Draw& d, Attrs& a) {
  if (d.cuda) a.device = d.rng.chance(0.7) ? program::Device::CUDA : program::Device::CPU;
}
void draw_like_device(Draw& d, Attrs& a) {
  if (d.cuda && d.rng.chance(0.4)) a.like_device = d.rng.chance(0.5) ? program::Device::CUDA : program::Device::CPU;
}

void draw_memo(Draw& d, Attrs& a) { a.memo = d.rng.range(0, 2); }

// Lengths summing to the dim's size, empty pieces included (1 to 4 of them; the last takes the rest).
void draw_split_sizes(Draw& d, Attrs& a) {
  std::int64_t rest = size_at(d.in, a.dim);
  a.dims.clear();
  const std::int64_t pieces = d.rng.range(1, 4);
  for (std::int64_t p = 1; p < pieces; ++p) {
    const std::int64_t length = d.rng.range(0, rest);
    a.dims.push_back(length);
    rest -= length;
  }
  a.dims.push_back(rest);
}

// ---- spoiling a value towards an ill-typed step

void spoil_sizes(Draw& d, Attrs& a) {
  if (a.sizes.empty()) a.sizes.push_back(-1);
  else a.sizes[static_cast<std::size_t>(d.rng.below(static_cast<std::int64_t>(a.sizes.size())))] = -d.rng.range(1, 3);
}

void spoil_view_sizes(Draw& d, Attrs& a) {
  if (d.rng.chance(0.3)) {
    a.sizes = {-1, -1};
  } else if (a.sizes.empty()) {
    a.sizes = {2};
  } else {
    auto& s = a.sizes[static_cast<std::size_t>(d.rng.below(static_cast<std::int64_t>(a.sizes.size())))];
    s = s == -1 ? 0 : s + 1;
  }
}

void spoil_expand_sizes(Draw& d, Attrs& a) {
  const auto& in = d.in[0].sizes;
  std::vector<std::size_t> fixed;  // dims of the operand with size != 1: they cannot change
  std::size_t lead = a.sizes.size() - in.size();
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1) fixed.push_back(i + lead);
  if (!fixed.empty() && d.rng.chance(0.6)) a.sizes[d.rng.pick(fixed)] += 1;
  else if (!in.empty() && d.rng.chance(0.5)) a.sizes.assign(in.begin() + 1, in.end());
  else a.sizes.insert(a.sizes.begin(), -2);
}

void spoil_strided(Draw& d, Attrs& a) {
  switch (d.rng.below(3)) {
    case 0: a.offset = -d.rng.range(1, 3); break;
    case 1: a.strides.push_back(1); break;
    default:
      if (d.op == OpId::AsStrided && !a.strides.empty()) a.strides[0] = -1;
      else a.offset = -1;
      break;
  }
}

void spoil_dims(Draw& d, Attrs& a) {
  if (d.op == OpId::Permute) {
    if (a.dims.size() >= 2 && d.rng.chance(0.5)) a.dims[1] = a.dims[0];
    else if (!a.dims.empty() && d.rng.chance(0.5)) a.dims.pop_back();
    else a.dims.push_back(d.nd);
  } else if (!a.dims.empty() && d.rng.chance(0.4)) {
    a.dims.push_back(a.dims[0]);
  } else {
    a.dims.push_back(std::max<std::int64_t>(d.nd, 1) + d.rng.below(2));
  }
}

void spoil_dim(Draw& d, Attrs& a) {
  std::int64_t n = std::max<std::int64_t>(d.nd, 1) + (d.op == OpId::Unsqueeze ? 1 : 0);
  a.dim = d.rng.chance(0.5) ? n + d.rng.below(2) : -n - 1 - d.rng.below(2);
}

void spoil_dim1(Draw& d, Attrs& a) {
  std::int64_t n = std::max<std::int64_t>(d.nd, 1);
  a.dim1 = d.rng.chance(0.5) ? n : -n - 1;
}

// start, end, step, index and length: the one of them the op can get wrong.
void spoil_range(Draw& d, Attrs& a) {
  const std::int64_t nd = d.nd;
  std::int64_t n = nd > 0 ? size_at(d.in, std::clamp<std::int64_t>(a.dim, -nd, nd - 1)) : 0;
  if (d.op == OpId::Arange) a.end = -d.rng.range(1, 3);
  else if (d.op == OpId::Slice) a.step = d.rng.pick({0, -1});
  else if (d.op == OpId::Select) a.index = d.rng.chance(0.5) ? n : -n - 1;
  else if (d.op == OpId::Unfold) a.step = d.rng.pick({0, -1});
  else if (d.op == OpId::Narrow) {
    if (d.rng.chance(0.5)) a.length = n + 1;
    else if (d.rng.chance(0.5)) a.length = -1;
    else a.start = n + 1;
  }
}

void spoil_scalar(Draw& d, Attrs& a) {
  if (d.op == OpId::SubScalar || d.op == OpId::SubScalar_) a.scalar = {Scalar::Kind::Bool, 1};
  else if (d.op == OpId::Pow) a.scalar = {Scalar::Kind::Int, -static_cast<double>(d.rng.range(1, 2))};
  else a.scalar = {Scalar::Kind::Float, 0.5};  // cannot be absorbed in place by an integral tensor
}

void spoil_memory_format(Draw& d, Attrs& a) {
  if (d.op == OpId::Contiguous && d.rng.chance(0.5)) a.memory_format = MemoryFormat::Preserve;
  else a.memory_format = d.nd == 4 ? MemoryFormat::ChannelsLast3d
                                   : (d.nd == 5 || d.rng.chance(0.5) ? MemoryFormat::ChannelsLast
                                                                     : MemoryFormat::ChannelsLast3d);
}

// A factory's integral dtype with requires_grad, or requires_grad_ of an integral tensor.
void spoil_dtype_or_requires_grad(Draw& d, Attrs& a) {
  if (d.op == OpId::RequiresGrad_) {
    a.requires_grad = true;
    return;
  }
  if (d.spec.reads(Attr::DType)) a.dtype = d.rng.chance(0.6) ? DType::Int64 : DType::Bool;
  if (d.spec.reads(Attr::RequiresGrad)) a.requires_grad = true;
}

// An element an integral dtype cannot hold (NaN, or one past int32), the dtype made int32 if it was none.
void spoil_elements(Draw& d, Attrs& a) {
  if (a.elements.empty()) return;
  a.dtype = DType::Int32;
  a.requires_grad = false;
  a.elements[static_cast<std::size_t>(d.rng.below(static_cast<std::int64_t>(a.elements.size())))] =
      d.rng.chance(0.5) ? Scalar{Scalar::Kind::Float, std::numeric_limits<double>::quiet_NaN()}
                        : Scalar{Scalar::Kind::Int, 2147483648.0};
}

void spoil_high(Draw& d, Attrs& a) { a.high = -d.rng.range(0, 3); }  // from=0 must be below it

void spoil_bounds(Draw&, Attrs& a) { a.min = a.max = std::nullopt; }  // clamp needs at least one bound

void spoil_size(Draw& d, Attrs& a) {
  const std::int64_t nd = d.nd;
  std::int64_t n = nd > 0 ? size_at(d.in, std::clamp<std::int64_t>(a.dim, -nd, nd - 1)) : 0;
  const bool split = splits_by_size(d);
  a.size = d.rng.chance(0.5) ? -d.rng.range(1, 2) : (split && n > 0 ? 0 : n + 1);
}

void spoil_chunks(Draw& d, Attrs& a) { a.chunks = -d.rng.range(0, 1); }

// Lengths that do not sum to the size, or a negative one.
void spoil_split_sizes(Draw& d, Attrs& a) {
  if (a.dims.empty() || d.rng.chance(0.5)) a.dims.push_back(1);
  else a.dims[0] = -1;
}

constexpr Rule no_spoil = nullptr;

struct AttrRules {
  Rule draw;
  Rule spoil;
};

// program/attrs.def's draw and spoil columns, in Attr order.
constexpr AttrRules kRules[] = {
#define PARITY_ATTR(id, name, type, field, draw, spoil) {draw, spoil},
#include "program/attrs.def"
#undef PARITY_ATTR
};

const AttrRules& rules(Attr attr) { return kRules[static_cast<std::size_t>(attr)]; }

}  // namespace

Attrs valid_attrs(Rng& rng, OpId op, std::span<const Meta> in, std::int64_t storage_numel, bool cuda) {
  Draw d{rng, op, program::spec(op), in, ndim_of(in), storage_numel, cuda};
  Attrs a;
  for (Attr attr : d.spec.attrs) rules(attr).draw(d, a);
  return a;
}

Scalar edge_scalar(Rng& rng, OpId op, std::span<const Meta> in) { return random_scalar(rng, op, in, true); }

bool spoil_attrs(Rng& rng, OpId op, std::span<const Meta> in, Attrs& a) {
  Draw d{rng, op, program::spec(op), in, ndim_of(in), 0, false};
  std::vector<Attr> spoilable;
  for (Attr attr : d.spec.attrs)
    if (rules(attr).spoil != no_spoil) spoilable.push_back(attr);
  if (spoilable.empty()) return false;
  rules(rng.pick(spoilable)).spoil(d, a);
  return true;
}

}  // namespace parity::generators
