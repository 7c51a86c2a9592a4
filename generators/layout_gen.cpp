#include "generators/layout_gen.h"

#include <algorithm>
#include <numeric>
#include <ostream>

#include "program/internal_assert.h"
#include "program/json.h"
#include "program/program.h"

namespace parity::generators {

std::string_view to_string(LayoutKind k) {
  switch (k) {
    case LayoutKind::Contiguous: return "contiguous";
    case LayoutKind::ChannelsLast: return "channels_last";
    case LayoutKind::ChannelsLast3d: return "channels_last_3d";
    case LayoutKind::Permuted: return "permuted";
    case LayoutKind::Sliced: return "sliced";
    case LayoutKind::Expanded: return "expanded";
    case LayoutKind::ZeroSize: return "zero_size";
    case LayoutKind::SizeOne: return "size_one";
    case LayoutKind::Overlapping: return "overlapping";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

namespace {

int random_ndim(Rng& rng, int lo, int hi) {
  // Weights for ndim 0..5: 2-d to 4-d dominate, 5-d and 0-d stay present.
  static const double w[] = {0.6, 1.6, 2.6, 2.0, 2.2, 1.0};
  std::vector<double> ws;
  for (int d = lo; d <= hi; ++d) ws.push_back(w[d]);
  return lo + rng.weighted(ws);
}

std::int64_t small_offset(Rng& rng, double p) { return rng.chance(p) ? rng.range(1, 3) : 0; }

// Size-1 dims may carry any stride without changing which elements are reached; PyTorch's own ops produce
// both the "computed" strides and others (after unsqueeze, slicing, permutes), and bugs hide in the difference.
void scramble_size_one(Rng& rng, const Dims& sizes, Dims& strides) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] != 1 || !rng.chance(0.6)) continue;
    switch (rng.below(4)) {
      case 0: strides[i] = 1; break;
      case 1: strides[i] = i + 1 < sizes.size() ? strides[i + 1] : 1; break;
      case 2: strides[i] = std::max<std::int64_t>(numel(sizes), 1); break;
      default: strides[i] = rng.range(0, 9); break;
    }
  }
}

Dims permuted_strides(Rng& rng, const Dims& sizes, bool transpose_only) {
  const std::size_t n = sizes.size();
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  if (n >= 2) {
    if (transpose_only) {
      auto a = static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(n)));
      auto b = static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(n - 1)));
      if (b >= a) ++b;
      std::swap(perm[a], perm[b]);
    } else {
      rng.shuffle(perm);
    }
  }
  // perm[i] is the dim stored at position i (outermost first).
  Dims psizes(n);
  for (std::size_t i = 0; i < n; ++i) psizes[i] = sizes[perm[i]];
  Dims pstrides = contiguous_strides(psizes);
  Dims strides(n);
  for (std::size_t i = 0; i < n; ++i) strides[perm[i]] = pstrides[i];
  return strides;
}

Dims dense_strides_of_some_order(Rng& rng, const Dims& sizes) {
  switch (rng.below(5)) {
    case 0:
    case 1: return contiguous_strides(sizes);
    case 2:
      if (sizes.size() == 4) return channels_last_strides(sizes);
      if (sizes.size() == 5) return channels_last_3d_strides(sizes);
      return permuted_strides(rng, sizes, true);
    default: return permuted_strides(rng, sizes, false);
  }
}

// 4-d or 5-d sizes where channels (dim 1) or all spatial dims are often 1: strides then fit both formats.
Dims channels_sizes(Rng& rng, int ndim) {
  Dims s = random_sizes(rng, ndim);
  if (rng.chance(0.55)) {
    switch (rng.below(5)) {
      case 0: s[1] = 1; break;                                     // C == 1
      case 1: std::fill(s.begin() + 2, s.end(), 1); break;         // spatial 1x1
      case 2: s[0] = 1; s[1] = 1; break;                           // N == C == 1
      case 3: s[static_cast<std::size_t>(rng.range(2, ndim - 1))] = 1; break;  // one spatial dim 1
      default: std::fill(s.begin() + 1, s.end(), 1); break;       // N111
    }
  }
  return s;
}

Dims sizes_for(Rng& rng, LayoutKind kind) {
  switch (kind) {
    case LayoutKind::Contiguous: return random_sizes(rng, random_ndim(rng, 0, 5));
    case LayoutKind::ChannelsLast: return channels_sizes(rng, 4);
    case LayoutKind::ChannelsLast3d: return channels_sizes(rng, 5);
    case LayoutKind::Permuted: {
      Dims s = random_sizes(rng, random_ndim(rng, 2, 5));
      // A permutation is only visible on dims of size > 1.
      if (std::count_if(s.begin(), s.end(), [](auto x) { return x > 1; }) < 2) {
        s[0] = std::max<std::int64_t>(s[0], 2);
        s[1] = std::max<std::int64_t>(s[1], 2);
      }
      return s;
    }
    case LayoutKind::Sliced: return random_sizes(rng, random_ndim(rng, 1, 5), 24);
    case LayoutKind::Expanded: {
      Dims s = random_sizes(rng, random_ndim(rng, 1, 4));
      if (std::all_of(s.begin(), s.end(), [](auto x) { return x < 2; }))
        s[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(s.size())))] = rng.range(2, 3);
      return s;
    }
    case LayoutKind::ZeroSize: {
      Dims s = random_sizes(rng, random_ndim(rng, 1, 4));
      s[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(s.size())))] = 0;
      if (s.size() > 1 && rng.chance(0.2)) s[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(s.size())))] = 0;
      return s;
    }
    case LayoutKind::SizeOne: {
      int nd = random_ndim(rng, 0, 5);
      Dims s = random_sizes(rng, nd);
      if (nd > 0) {
        s[static_cast<std::size_t>(rng.below(nd))] = 1;
        for (auto& x : s)
          if (rng.chance(0.3)) x = 1;
      }
      return s;
    }
    case LayoutKind::Overlapping: {
      Dims s = random_sizes(rng, random_ndim(rng, 1, 3), 24);
      for (auto& x : s)
        if (x == 1 && rng.chance(0.7)) x = 2;
      if (std::all_of(s.begin(), s.end(), [](auto x) { return x < 2; })) s[0] = 2;  // one element cannot overlap
      return s;
    }
  }
  return {};
}

LayoutSpec layout_of(Rng& rng, LayoutKind kind, const Dims& sizes) {
  LayoutSpec l{kind, sizes, contiguous_strides(sizes), 0};
  switch (kind) {
    case LayoutKind::Contiguous:
      l.offset = small_offset(rng, 0.2);
      break;
    case LayoutKind::ChannelsLast:
      l.strides = channels_last_strides(sizes);
      if (rng.chance(0.3)) scramble_size_one(rng, sizes, l.strides);
      l.offset = small_offset(rng, 0.15);
      break;
    case LayoutKind::ChannelsLast3d:
      l.strides = channels_last_3d_strides(sizes);
      if (rng.chance(0.3)) scramble_size_one(rng, sizes, l.strides);
      l.offset = small_offset(rng, 0.15);
      break;
    case LayoutKind::Permuted:
      l.strides = permuted_strides(rng, sizes, rng.chance(0.5));
      l.offset = small_offset(rng, 0.15);
      break;
    case LayoutKind::Sliced: {
      // A dense base of larger sizes, sliced with a step and a start in each dim.
      const std::size_t n = sizes.size();
      Dims steps(n), base(n), starts(n);
      for (std::size_t i = 0; i < n; ++i) {
        steps[i] = sizes[i] > 1 ? rng.pick({1, 1, 2, 3}) : 1;
        std::int64_t reach = sizes[i] == 0 ? 0 : (sizes[i] - 1) * steps[i] + 1;
        base[i] = reach + rng.range(0, 2);
        starts[i] = rng.range(0, base[i] - reach);
      }
      // Channels-last order over a non-dense slice is the case suggest_memory_format and stride inference
      // disagree on: make it common for 4-d and 5-d.
      Dims bstrides = n == 4 && rng.chance(0.5)   ? channels_last_strides(base)
                      : n == 5 && rng.chance(0.5) ? channels_last_3d_strides(base)
                                                  : dense_strides_of_some_order(rng, base);
      std::int64_t off = small_offset(rng, 0.3);
      bool sliced = off > 0;
      for (std::size_t i = 0; i < n; ++i) {
        l.strides[i] = bstrides[i] * steps[i];
        off += starts[i] * bstrides[i];
        sliced = sliced || steps[i] > 1 || starts[i] > 0;
      }
      if (!sliced) off += 1;  // a slice that starts past element 0 is the minimal non-trivial case
      l.offset = off;
      break;
    }
    case LayoutKind::Expanded: {
      Dims under = sizes;
      std::vector<std::size_t> expanded;
      for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] > 1 && rng.chance(0.5)) expanded.push_back(i);
      if (expanded.empty())
        for (std::size_t i = 0; i < sizes.size(); ++i)
          if (sizes[i] > 1) {
            expanded.push_back(i);
            break;
          }
      for (auto i : expanded) under[i] = 1;
      l.strides = rng.chance(0.7) ? contiguous_strides(under) : permuted_strides(rng, under, false);
      for (auto i : expanded) l.strides[i] = 0;
      l.offset = small_offset(rng, 0.2);
      break;
    }
    case LayoutKind::ZeroSize:
      if (rng.chance(0.5)) {
        for (auto& s : l.strides) s = rng.range(0, 6);
      } else if (sizes.size() == 4 && rng.chance(0.4)) {
        l.strides = channels_last_strides(sizes);
      }
      l.offset = small_offset(rng, 0.3);
      break;
    case LayoutKind::SizeOne:
      l.strides = dense_strides_of_some_order(rng, sizes);
      if (rng.chance(0.5)) scramble_size_one(rng, sizes, l.strides);
      l.offset = small_offset(rng, 0.15);
      break;
    case LayoutKind::Overlapping: {
      for (int attempt = 0; attempt < 16; ++attempt) {
        for (auto& s : l.strides) s = rng.range(0, 3);
        if (has_internal_overlap(sizes, l.strides)) break;
      }
      if (!has_internal_overlap(sizes, l.strides)) {
        // Sliding windows: the last dim of size >= 2 gets the stride of the one before it (or 0).
        for (std::size_t i = sizes.size(); i-- > 0;)
          if (sizes[i] > 1) {
            l.strides[i] = 0;
            break;
          }
      }
      l.offset = small_offset(rng, 0.2);
      break;
    }
  }
  return l;
}

LayoutKind random_kind(Rng& rng) {
  static const double w[] = {14, 14, 7, 12, 12, 9, 5, 12, 7};
  return kAllLayoutKinds[rng.weighted(w)];
}

rc::Gen<LayoutSpec> layouts_of(std::vector<LayoutKind> kinds) {
  return rc::Gen<LayoutSpec>([kinds](const rc::Random& random, int) {
    rc::Random r = random;
    Rng rng(r.next());
    LayoutSpec l = kinds.empty() ? random_layout(rng) : random_layout(rng, rng.pick(kinds));
    LayoutSpec simple = contiguous_of(l);
    if (simple == l) return rc::shrinkable::just(l);
    return rc::shrinkable::just(l, rc::seq::just(rc::shrinkable::just(simple)));
  });
}

}  // namespace

LayoutSpec contiguous_of(const LayoutSpec& l) {
  return LayoutSpec{LayoutKind::Contiguous, l.sizes, contiguous_strides(l.sizes), 0};
}

void showValue(const LayoutSpec& l, std::ostream& os) {
  os << to_string(l.kind) << " sizes=" << program::render_ints(l.sizes)
     << " strides=" << program::render_ints(l.strides) << " offset=" << l.offset;
}

Dims random_sizes(Rng& rng, int ndim, std::int64_t max_numel) {
  static const double w[] = {35, 30, 20, 10, 5};  // sizes 1..5
  Dims s(static_cast<std::size_t>(ndim));
  for (auto& x : s) x = 1 + rng.weighted(w);
  while (numel(s) > max_numel) *std::max_element(s.begin(), s.end()) -= 1;
  return s;
}

Dims random_shape(Rng& rng) {
  Dims s = random_sizes(rng, random_ndim(rng, 0, 4));
  if (!s.empty() && rng.chance(0.05)) s[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(s.size())))] = 0;
  return s;
}

LayoutSpec random_layout(Rng& rng) { return random_layout(rng, random_kind(rng)); }

LayoutSpec random_layout(Rng& rng, LayoutKind kind) { return layout_of(rng, kind, sizes_for(rng, kind)); }

LayoutSpec random_layout_for(Rng& rng, const Dims& sizes) {
  std::vector<LayoutKind> kinds = {LayoutKind::Contiguous, LayoutKind::Contiguous, LayoutKind::Sliced};
  const bool any_big = std::any_of(sizes.begin(), sizes.end(), [](auto x) { return x > 1; });
  const bool any_one = std::any_of(sizes.begin(), sizes.end(), [](auto x) { return x == 1; });
  const bool empty = numel(sizes) == 0;
  if (sizes.empty()) kinds = {LayoutKind::Contiguous, LayoutKind::SizeOne};
  if (sizes.size() >= 2) kinds.push_back(LayoutKind::Permuted);
  if (sizes.size() == 4) kinds.insert(kinds.end(), 2, LayoutKind::ChannelsLast);
  if (sizes.size() == 5) kinds.insert(kinds.end(), 2, LayoutKind::ChannelsLast3d);
  if (any_big && !empty) kinds.push_back(LayoutKind::Expanded);
  if (any_big && !empty) kinds.push_back(LayoutKind::Overlapping);
  if (any_one) kinds.push_back(LayoutKind::SizeOne);
  if (empty) kinds.push_back(LayoutKind::ZeroSize);
  const LayoutSpec l = layout_of(rng, rng.pick(kinds), sizes);
  // Sizes at the element cap (attr_gen's cap_shape, met by a fresh operand of such a tensor's shape) with an
  // offset or gaps would reach past the storage a program may hold, which the JSON reader refuses: a finding
  // could not be read back, nor a mutant sent to a worker.
  return program::storage_extent(l.sizes, l.strides, l.offset) > program::kMaxNumel ? contiguous_of(l) : l;
}

LayoutSpec random_view_within(Rng& rng, std::int64_t storage_numel) {
  LayoutSpec l;
  l.kind = LayoutKind::Contiguous;
  if (storage_numel <= 0) {
    l.kind = LayoutKind::ZeroSize;
    l.sizes = random_sizes(rng, random_ndim(rng, 1, 3));
    l.sizes[0] = 0;
    l.strides = contiguous_strides(l.sizes);
    return l;
  }
  l.sizes = random_sizes(rng, random_ndim(rng, 0, 3), std::min<std::int64_t>(storage_numel, kMaxLayoutNumel));
  switch (rng.below(5)) {
    case 0:
    case 1: l.strides = contiguous_strides(l.sizes); break;
    case 2:
      l.kind = LayoutKind::Permuted;
      l.strides = permuted_strides(rng, l.sizes, false);
      break;
    default:
      l.kind = LayoutKind::Overlapping;
      l.strides.resize(l.sizes.size());
      for (auto& s : l.strides) s = rng.range(0, 3);
      break;
  }
  // Shrink until the view fits; all-ones sizes reach one element, which always fits.
  while (program::storage_extent(l.sizes, l.strides, 0) > storage_numel)
    *std::max_element(l.sizes.begin(), l.sizes.end()) -= 1;
  l.offset = rng.range(0, storage_numel - program::storage_extent(l.sizes, l.strides, 0));
  if (l.kind == LayoutKind::Overlapping && !has_internal_overlap(l.sizes, l.strides)) l.kind = LayoutKind::Sliced;
  return l;
}

rc::Gen<LayoutSpec> layouts() { return layouts_of({}); }
rc::Gen<LayoutSpec> layouts(std::vector<LayoutKind> kinds) { return layouts_of(std::move(kinds)); }

}  // namespace parity::generators
