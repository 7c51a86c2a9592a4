#include "generators/strides.h"

#include <algorithm>
#include <numeric>

namespace parity::generators {

std::int64_t numel(const Dims& sizes) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

Dims channels_last_strides(const Dims& s) {
  if (s.size() != 4) return contiguous_strides(s);
  Dims st(4);
  st[1] = 1;
  st[3] = s[1];
  st[2] = st[3] * s[3];
  st[0] = st[2] * s[2];
  return st;
}

Dims channels_last_3d_strides(const Dims& s) {
  if (s.size() != 5) return contiguous_strides(s);
  Dims st(5);
  st[1] = 1;
  st[4] = s[1];
  st[3] = st[4] * s[4];
  st[2] = st[3] * s[3];
  st[0] = st[2] * s[2];
  return st;
}

bool is_contiguous(const Dims& sizes, const Dims& strides) {
  if (numel(sizes) == 0) return true;
  std::int64_t z = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (strides[d] != z) return false;
    z *= sizes[d];
  }
  return true;
}

namespace {
bool ordered_contiguous(const Dims& sizes, const Dims& strides, std::initializer_list<int> order) {
  std::int64_t expected = 1;
  for (int d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool ordered_strides_like(const Dims& sizes, const Dims& strides, std::initializer_list<int> order) {
  std::int64_t min = 0;
  if (strides[1] == 0) return false;  // trivial C: default to contiguous
  for (int d : order) {
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    // N111 and N11W-sliced tensors are ambiguous: PyTorch falls back to contiguous.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}
}  // namespace

bool is_channels_last_contiguous(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 4 && ordered_contiguous(sizes, strides, {1, 3, 2, 0});
}
bool is_channels_last_3d_contiguous(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 5 && ordered_contiguous(sizes, strides, {1, 4, 3, 2, 0});
}
bool is_channels_last_strides(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 4 && ordered_strides_like(sizes, strides, {1, 3, 2, 0});
}
bool is_channels_last_3d_strides(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 5 && ordered_strides_like(sizes, strides, {1, 4, 3, 2, 0});
}

namespace {
bool computed_non_overlapping_and_dense(const Dims& sizes, const Dims& strides) {
  const std::size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  // Sort by strides, leaving size-0 and size-1 dims at the end.
  std::sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  std::int64_t require = 1;
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t size = sizes[perm[i]];
    if (size < 2) return true;
    if (strides[perm[i]] != require) return false;
    require *= size;
  }
  return true;
}
}  // namespace

bool is_non_overlapping_and_dense(const Dims& sizes, const Dims& strides) {
  // TensorImpl::refresh_contiguous: the contiguity flags short-circuit the computation, so an empty tensor is
  // non-overlapping and dense whatever its strides.
  return is_contiguous(sizes, strides) || is_channels_last_contiguous(sizes, strides) ||
         is_channels_last_3d_contiguous(sizes, strides) || computed_non_overlapping_and_dense(sizes, strides);
}

Dims infer_dense_strides(const Dims& sizes, const Dims& strides) {
  const std::size_t n = sizes.size();
  if (n == 0) return {};
  if (n == 1) return {1};
  std::vector<std::size_t> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  // -1: dim0 before dim1, 1: after, 0: ambiguous (a stride-0 dim keeps its contiguous position).
  auto should_swap = [&](std::size_t d0, std::size_t d1) {
    std::int64_t s0 = strides[d0], s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    if (sizes[d0] > sizes[d1]) return 1;
    return 0;
  };
  for (std::size_t i = 1; i < n; ++i) {
    std::size_t d1 = i;
    for (std::size_t j = 1; j <= i; ++j) {
      std::size_t d0 = i - j;
      int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Dims out(n);
  std::int64_t cur = 1;
  for (std::size_t i = 0; i < n; ++i) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
  return out;
}

}  // namespace parity::generators
