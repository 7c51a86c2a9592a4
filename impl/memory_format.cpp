#include "impl/memory_format.h"

#include <algorithm>
#include <numeric>

#include "impl/error.h"

namespace parity::impl {

Dims strides_for(const Dims& sizes, MemoryFormat format) {
  Dims strides(sizes.size());
  switch (format) {
    case MemoryFormat::ChannelsLast:
      PARITY_CHECK(sizes.size() == 4, ErrorKind::MemoryFormat, "required rank 4 tensor to use channels_last format");
      strides[1] = 1;
      strides[3] = sizes[1];
      strides[2] = strides[3] * sizes[3];
      strides[0] = strides[2] * sizes[2];
      return strides;
    case MemoryFormat::ChannelsLast3d:
      PARITY_CHECK(sizes.size() == 5, ErrorKind::MemoryFormat, "required rank 5 tensor to use channels_last_3d format");
      strides[1] = 1;
      strides[4] = sizes[1];
      strides[3] = strides[4] * sizes[4];
      strides[2] = strides[3] * sizes[3];
      strides[0] = strides[2] * sizes[2];
      return strides;
    case MemoryFormat::Contiguous:
    case MemoryFormat::Preserve:
      break;
  }
  std::int64_t s = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<std::int64_t>(sizes[i], 1);
  }
  return strides;
}

namespace {
bool channels_last_like(const Dims& sizes, const Dims& strides, std::initializer_list<int> order) {
  std::int64_t min = 0;
  if (strides[1] == 0) return false;  // trivial C dim: default to NCHW
  for (int d : order) {
    if (sizes[d] == 0) return false;
    if (strides[d] < min) return false;
    // N111 with equal strides is ambiguous: fall back to NCHW.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}
}  // namespace

bool is_channels_last_strides_2d(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 4 && channels_last_like(sizes, strides, {1, 3, 2, 0});
}

bool is_channels_last_strides_3d(const Dims& sizes, const Dims& strides) {
  return sizes.size() == 5 && channels_last_like(sizes, strides, {1, 4, 3, 2, 0});
}

std::vector<std::size_t> sort_dims(std::size_t ndim, const std::function<int(std::size_t, std::size_t)>& should_swap) {
  std::vector<std::size_t> perm(ndim);
  std::iota(perm.rbegin(), perm.rend(), 0);
  for (std::size_t i = 1; i < ndim; ++i) {
    std::size_t dim1 = i;
    for (std::size_t dim0 = i; dim0-- > 0;) {
      int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

Dims infer_dense_strides(const Dims& sizes, const Dims& strides) {
  const std::size_t ndim = sizes.size();
  if (ndim == 0) return {};
  if (ndim == 1) return {1};
  // Stride-0 dims are ambiguous and keep their place; equal strides put the smaller size first.
  std::vector<std::size_t> perm = sort_dims(ndim, [&](std::size_t d0, std::size_t d1) {
    std::int64_t s0 = strides[d0], s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    if (sizes[d0] > sizes[d1]) return 1;
    return 0;
  });
  Dims out(ndim);
  std::int64_t cur = 1;
  for (std::size_t i = 0; i < ndim; ++i) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
  return out;
}

}  // namespace parity::impl
