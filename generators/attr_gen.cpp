#include "generators/attr_gen.h"

#include <algorithm>
#include <numeric>

#include "generators/layout_gen.h"

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

Scalar random_scalar(Rng& rng, OpId op, std::span<const Meta> in) {
  Scalar s;
  if (op == OpId::Pow) {
    static const double w[] = {5, 4, 1};
    s.kind = static_cast<Scalar::Kind>(rng.weighted(w) == 0 ? 1 : 0);  // Float or Int
    s.value = s.kind == Scalar::Kind::Int ? static_cast<double>(rng.pick({0, 1, 2, 3, -1, 2}))
                                          : rng.pick({2.0, 0.5, -1.0, 3.0, 0.0, 1.0, -0.5, 1.5});
    return s;
  }
  // In-place ops cannot change their operand's dtype: pick a scalar kind the operand can absorb.
  bool inplace = program::spec(op).kind == program::OpKind::InPlace && !in.empty();
  DType target = in.empty() ? DType::Float32 : in[0].dtype;
  static const double w[] = {4, 5, 1};  // Int, Float, Bool
  int k = rng.weighted(w);
  if (inplace && !program::is_floating(target)) k = target == DType::Bool ? 2 : rng.pick({0, 0, 2});
  s.kind = static_cast<Scalar::Kind>(k);
  switch (s.kind) {
    case Scalar::Kind::Int: s.value = static_cast<double>(rng.pick({0, 1, -1, 2, -2, 3})); break;
    case Scalar::Kind::Float: s.value = rng.pick({0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, 3.0, -0.25}); break;
    case Scalar::Kind::Bool: s.value = static_cast<double>(rng.below(2)); break;
  }
  return s;
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

}  // namespace

Attrs valid_attrs(Rng& rng, OpId op, std::span<const Meta> in, std::int64_t storage_numel, bool cuda) {
  const program::OpSpec& spec = program::spec(op);
  const std::int64_t nd = ndim_of(in);
  Attrs a;
  for (Attr attr : spec.attrs) {
    switch (attr) {
      case Attr::Sizes: a.sizes = random_shape(rng); break;
      case Attr::ViewSizes: a.sizes = view_sizes(rng, in[0].sizes); break;
      case Attr::ExpandSizes: a.sizes = expand_sizes(rng, in[0].sizes); break;
      case Attr::Strided: {
        LayoutSpec l = op == OpId::AsStrided ? random_view_within(rng, storage_numel) : random_layout(rng);
        a.sizes = l.sizes;
        a.strides = l.strides;
        a.offset = l.offset;
        break;
      }
      case Attr::Dims:
        if (op == OpId::Permute) {
          a.dims.resize(static_cast<std::size_t>(nd));
          std::iota(a.dims.begin(), a.dims.end(), 0);
          rng.shuffle(a.dims);
          for (auto& d : a.dims)
            if (rng.chance(0.15)) d -= nd;
        } else if (nd == 0) {
          a.dims = rng.pick(std::vector<std::vector<std::int64_t>>{{}, {0}, {-1}});
        } else {
          for (std::int64_t d = 0; d < nd; ++d)
            if (rng.chance(0.5)) a.dims.push_back(rng.chance(0.2) ? d - nd : d);
          if (a.dims.empty() && rng.chance(0.7)) a.dims.push_back(rng.below(nd));
          rng.shuffle(a.dims);
        }
        break;
      case Attr::Dim:
        if (op == OpId::Unsqueeze) {
          a.dim = rng.range(-(nd + 1), nd);
        } else if (op == OpId::Select && nd > 0) {
          // select needs a dim of nonzero size
          std::vector<std::int64_t> ok;
          for (std::int64_t d = 0; d < nd; ++d)
            if (in[0].sizes[static_cast<std::size_t>(d)] > 0) ok.push_back(d);
          a.dim = ok.empty() ? 0 : rng.pick(ok);
          if (rng.chance(0.2)) a.dim -= nd;
        } else {
          a.dim = any_dim(rng, nd);
        }
        break;
      case Attr::Dim1: a.dim1 = any_dim(rng, nd); break;
      case Attr::Start: {
        std::int64_t n = size_at(in, a.dim);
        a.start = op == OpId::Narrow ? rng.range(-n, n) : (rng.chance(0.15) ? rng.range(-n - 1, -1) : rng.range(0, n));
        break;
      }
      case Attr::End:
        if (op == OpId::Arange) {
          a.end = rng.range(0, 12);
        } else {
          std::int64_t n = size_at(in, a.dim);
          switch (rng.below(4)) {
            case 0: a.end = n; break;
            case 1: a.end = rng.range(-n, n); break;
            case 2: a.end = n + rng.range(1, 50); break;  // past the end: clamped
            default: a.end = std::min(n, std::max<std::int64_t>(a.start, 0) + rng.range(0, 3)); break;
          }
        }
        break;
      case Attr::Step: a.step = rng.pick({1, 1, 2, 3}); break;
      case Attr::Index: {
        std::int64_t n = size_at(in, a.dim);
        const bool by_size = op == OpId::Split || op == OpId::UnsafeSplit;
        const bool by_chunks = op == OpId::Chunk || op == OpId::UnsafeChunk;
        if (op == OpId::SplitWithSizes) {
          a.index = rng.range(0, std::max<std::int64_t>(static_cast<std::int64_t>(a.dims.size()), 1) - 1);
        } else if (by_size || by_chunks) {
          // Which output to keep: one of the pieces LibTorch makes (chunk of an empty dim makes `chunks`).
          std::int64_t piece = by_size ? a.size : (n + a.chunks - 1) / std::max<std::int64_t>(a.chunks, 1);
          std::int64_t count = n == 0 ? (by_chunks ? a.chunks : 1) : (n + piece - 1) / std::max<std::int64_t>(piece, 1);
          a.index = rng.range(0, std::max<std::int64_t>(count, 1) - 1);
        } else if (op == OpId::Unbind) {
          a.index = rng.range(0, std::max<std::int64_t>(n, 1) - 1);
        } else {
          a.index = n > 0 ? rng.range(-n, n - 1) : 0;
        }
        break;
      }
      case Attr::Length: {
        std::int64_t n = size_at(in, a.dim);
        std::int64_t s = a.start < 0 ? a.start + n : a.start;
        a.length = rng.range(0, std::max<std::int64_t>(n - s, 0));
        break;
      }
      case Attr::Scalar: a.scalar = random_scalar(rng, op, in); break;
      case Attr::MemoryFormat:
        // A factory's format is for the sizes it was just given.
        a.memory_format =
            random_memory_format(rng, op, spec.arity == 0 ? static_cast<std::int64_t>(a.sizes.size()) : nd);
        break;
      case Attr::DType: a.dtype = random_dtype(rng, op); break;
      case Attr::RequiresGrad:
        if (op == OpId::RequiresGrad_) a.requires_grad = program::is_floating(in[0].dtype) && rng.chance(0.75);
        else a.requires_grad = program::is_floating(a.dtype) && rng.chance(op == OpId::Rand ? 0.6 : 0.4);
        break;
      case Attr::Keepdim: a.keepdim = rng.chance(0.4); break;
      case Attr::RetainGraph: a.retain_graph = rng.chance(0.35); break;
      case Attr::Seed: a.seed = rng.next() & 0xffffffffULL; break;
      case Attr::Offset: a.offset = rng.pick({0, 0, 1, -1, 2}); break;
      case Attr::Min: {
        // Both bounds (crossed ones too), or one of them; never neither (that is the ill-typed case).
        const int which = rng.below(4);  // 0, 1: both; 2: min only; 3: max only
        if (which != 3) a.min = random_scalar(rng, op, in);
        if (which != 2) a.max = random_scalar(rng, op, in);
        break;
      }
      case Attr::Max: break;  // drawn with Min
      case Attr::Size: {
        std::int64_t n = size_at(in, a.dim);
        a.size = op == OpId::Split || op == OpId::UnsafeSplit ? (n == 0 ? rng.range(0, 2) : rng.range(1, n))
                                                              : rng.range(0, n);
        break;
      }
      case Attr::Chunks: a.chunks = rng.range(1, 4); break;
      case Attr::Copy: a.copy = rng.chance(0.6); break;
      case Attr::Accumulate: a.accumulate = rng.chance(0.5); break;
      case Attr::AllowUnused: a.allow_unused = rng.chance(0.4); break;
      case Attr::CreateGraph: a.create_graph = rng.chance(0.25); break;
      // Mostly cuda, some cpu: operands on two devices are what the device rules are about.
      case Attr::Device:
        if (cuda) a.device = rng.chance(0.7) ? program::Device::CUDA : program::Device::CPU;
        break;
      case Attr::LikeDevice:
        if (cuda && rng.chance(0.4)) a.like_device = rng.chance(0.5) ? program::Device::CUDA : program::Device::CPU;
        break;
      case Attr::Memo: a.memo = rng.range(0, 2); break;
      case Attr::SplitSizes: {
        // Lengths summing to the dim's size, empty pieces included (1 to 4 of them; the last takes the rest).
        std::int64_t rest = size_at(in, a.dim);
        a.dims.clear();
        const std::int64_t pieces = rng.range(1, 4);
        for (std::int64_t p = 1; p < pieces; ++p) {
          const std::int64_t length = rng.range(0, rest);
          a.dims.push_back(length);
          rest -= length;
        }
        a.dims.push_back(rest);
        break;
      }
    }
  }
  return a;
}

bool spoil_attrs(Rng& rng, OpId op, std::span<const Meta> in, Attrs& a) {
  const program::OpSpec& spec = program::spec(op);
  const std::int64_t nd = ndim_of(in);
  std::vector<Attr> spoilable;
  for (Attr attr : spec.attrs)
    if (attr != Attr::Keepdim && attr != Attr::RetainGraph && attr != Attr::Seed && attr != Attr::Copy &&
        attr != Attr::Memo && attr != Attr::Offset && attr != Attr::Accumulate && attr != Attr::AllowUnused &&
        attr != Attr::CreateGraph && attr != Attr::Device && attr != Attr::LikeDevice)
      spoilable.push_back(attr);
  if (spoilable.empty()) return false;
  switch (rng.pick(spoilable)) {
    case Attr::Sizes:
      if (a.sizes.empty()) a.sizes.push_back(-1);
      else a.sizes[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(a.sizes.size())))] = -rng.range(1, 3);
      break;
    case Attr::ViewSizes:
      if (rng.chance(0.3)) {
        a.sizes = {-1, -1};
      } else if (a.sizes.empty()) {
        a.sizes = {2};
      } else {
        auto& s = a.sizes[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(a.sizes.size())))];
        s = s == -1 ? 0 : s + 1;
      }
      break;
    case Attr::ExpandSizes: {
      std::vector<std::size_t> fixed;  // dims of the operand with size != 1: they cannot change
      std::size_t lead = a.sizes.size() - in[0].sizes.size();
      for (std::size_t i = 0; i < in[0].sizes.size(); ++i)
        if (in[0].sizes[i] != 1) fixed.push_back(i + lead);
      if (!fixed.empty() && rng.chance(0.6)) a.sizes[rng.pick(fixed)] += 1;
      else if (!in[0].sizes.empty() && rng.chance(0.5)) a.sizes.assign(in[0].sizes.begin() + 1, in[0].sizes.end());
      else a.sizes.insert(a.sizes.begin(), -2);
      break;
    }
    case Attr::Strided:
      switch (rng.below(3)) {
        case 0: a.offset = -rng.range(1, 3); break;
        case 1: a.strides.push_back(1); break;
        default:
          if (op == OpId::AsStrided && !a.strides.empty()) a.strides[0] = -1;
          else a.offset = -1;
          break;
      }
      break;
    case Attr::Dims:
      if (op == OpId::Permute) {
        if (a.dims.size() >= 2 && rng.chance(0.5)) a.dims[1] = a.dims[0];
        else if (!a.dims.empty() && rng.chance(0.5)) a.dims.pop_back();
        else a.dims.push_back(nd);
      } else if (!a.dims.empty() && rng.chance(0.4)) {
        a.dims.push_back(a.dims[0]);
      } else {
        a.dims.push_back(std::max<std::int64_t>(nd, 1) + rng.below(2));
      }
      break;
    case Attr::Dim: {
      std::int64_t n = std::max<std::int64_t>(nd, 1) + (op == OpId::Unsqueeze ? 1 : 0);
      a.dim = rng.chance(0.5) ? n + rng.below(2) : -n - 1 - rng.below(2);
      break;
    }
    case Attr::Dim1: {
      std::int64_t n = std::max<std::int64_t>(nd, 1);
      a.dim1 = rng.chance(0.5) ? n : -n - 1;
      break;
    }
    case Attr::Start:
    case Attr::End:
    case Attr::Step:
    case Attr::Index:
    case Attr::Length: {
      std::int64_t n = nd > 0 ? size_at(in, std::clamp<std::int64_t>(a.dim, -nd, nd - 1)) : 0;
      if (op == OpId::Arange) a.end = -rng.range(1, 3);
      else if (op == OpId::Slice) a.step = rng.pick({0, -1});
      else if (op == OpId::Select) a.index = rng.chance(0.5) ? n : -n - 1;
      else if (op == OpId::Unfold) a.step = rng.pick({0, -1});
      else if (op == OpId::Narrow) {
        if (rng.chance(0.5)) a.length = n + 1;
        else if (rng.chance(0.5)) a.length = -1;
        else a.start = n + 1;
      }
      break;
    }
    case Attr::Scalar:
      if (op == OpId::SubScalar || op == OpId::SubScalar_) a.scalar = {Scalar::Kind::Bool, 1};
      else if (op == OpId::Pow) a.scalar = {Scalar::Kind::Int, -static_cast<double>(rng.range(1, 2))};
      else a.scalar = {Scalar::Kind::Float, 0.5};  // cannot be absorbed in place by an integral tensor
      break;
    case Attr::MemoryFormat:
      if (op == OpId::Contiguous && rng.chance(0.5)) a.memory_format = MemoryFormat::Preserve;
      else a.memory_format = nd == 4 ? MemoryFormat::ChannelsLast3d : (nd == 5 || rng.chance(0.5) ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d);
      break;
    case Attr::DType:
    case Attr::RequiresGrad:
      if (op == OpId::RequiresGrad_) {
        a.requires_grad = true;
      } else {
        if (spec.reads(Attr::DType))
          a.dtype = rng.chance(0.6) ? DType::Int64 : DType::Bool;
        if (spec.reads(Attr::RequiresGrad))
          a.requires_grad = true;
      }
      break;
    case Attr::Min:
    case Attr::Max:
      a.min = a.max = std::nullopt;  // clamp needs at least one bound
      break;
    case Attr::Size: {
      std::int64_t n = nd > 0 ? size_at(in, std::clamp<std::int64_t>(a.dim, -nd, nd - 1)) : 0;
      a.size = rng.chance(0.5) ? -rng.range(1, 2) : ((op == OpId::Split || op == OpId::UnsafeSplit) && n > 0 ? 0 : n + 1);
      break;
    }
    case Attr::Chunks: a.chunks = -rng.range(0, 1); break;
    case Attr::SplitSizes:
      // Lengths that do not sum to the size, or a negative one.
      if (a.dims.empty() || rng.chance(0.5)) a.dims.push_back(1);
      else a.dims[0] = -1;
      break;
    case Attr::Keepdim:
    case Attr::RetainGraph:
    case Attr::Seed:
    case Attr::Copy:
    case Attr::Memo:
    case Attr::Offset:
    case Attr::Accumulate:
    case Attr::AllowUnused:
    case Attr::CreateGraph:
    case Attr::Device:
    case Attr::LikeDevice:
      return false;
  }
  return true;
}

}  // namespace parity::generators
