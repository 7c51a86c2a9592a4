#include "impl/layout.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <sstream>

#include "impl/error.h"
#include "impl/error_class.h"
#include "impl/version_gate.h"

namespace parity::impl {

Layout Layout::dense(const Dims& sizes, MemoryFormat format) { return Layout{sizes, strides_for(sizes, format), 0}; }

Layout Layout::preserved() const {
  if (is_non_overlapping_and_dense()) return Layout{sizes, strides, 0};
  return Layout{sizes, infer_dense_strides(sizes, strides), 0};
}

std::int64_t Layout::numel() const {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

std::int64_t Layout::storage_extent() const {
  std::int64_t last = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    last += strides[i] * (sizes[i] - 1);
  }
  return offset + last;
}

bool Layout::is_contiguous(MemoryFormat format) const {
  if (format == MemoryFormat::ChannelsLast || format == MemoryFormat::ChannelsLast3d) {
    // TensorImpl marks a tensor channels_last_3d-contiguous only when it is not channels_last-contiguous,
    // and only 4-d / 5-d tensors can be either.
    std::initializer_list<int> order4 = {1, 3, 2, 0}, order5 = {1, 4, 3, 2, 0};
    bool want3d = format == MemoryFormat::ChannelsLast3d;
    if (dim() != (want3d ? 5 : 4)) return false;
    std::int64_t expected = 1;
    for (int d : want3d ? order5 : order4) {
      if (sizes[d] != 1) {
        if (strides[d] != expected) return false;
        expected *= sizes[d];
      }
    }
    return true;
  }
  if (numel() == 0) return true;
  std::int64_t z = 1;
  for (std::int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes[d] != 1) {
      if (strides[d] != z) return false;
      z *= sizes[d];
    }
  }
  return true;
}

bool Layout::is_non_overlapping_and_dense() const {
  if (is_contiguous() || is_contiguous(MemoryFormat::ChannelsLast) || is_contiguous(MemoryFormat::ChannelsLast3d))
    return true;
  if (dim() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<std::int64_t> perm(sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  // Sort by strides, leaving 0- and 1-sized dims at the end.
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  std::int64_t require = 1;
  for (auto p : perm) {
    if (sizes[p] < 2) return true;
    if (strides[p] != require) return false;
    require *= sizes[p];
  }
  return true;
}

bool Layout::is_strides_like_channels_last() const { return is_channels_last_strides_2d(sizes, strides); }
bool Layout::is_strides_like_channels_last_3d() const {
  return !is_strides_like_channels_last() && is_channels_last_strides_3d(sizes, strides);
}

MemoryFormat Layout::suggest_memory_format() const {
  if (is_strides_like_channels_last()) return MemoryFormat::ChannelsLast;
  if (is_strides_like_channels_last_3d()) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

std::string format_dims(const Dims& d) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << ']';
  return os.str();
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, bool wrap_scalar) {
  if (ndim <= 0) {
    PARITY_CHECK_AS(wrap_scalar, ErrorKind::IndexRange, IndexError,
          "Dimension specified as " + std::to_string(dim) + " but tensor has no dimensions");
    ndim = 1;
  }
  std::int64_t lo = -ndim, hi = ndim - 1;
  PARITY_CHECK_AS(dim >= lo && dim <= hi, ErrorKind::IndexRange, IndexError,
        "Dimension out of range (expected to be in range of [" + std::to_string(lo) + ", " + std::to_string(hi) +
            "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + ndim : dim;
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  std::size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(n) - 1; i >= 0; --i) {
    std::ptrdiff_t off = static_cast<std::ptrdiff_t>(n) - 1 - i;
    std::ptrdiff_t da = static_cast<std::ptrdiff_t>(a.size()) - 1 - off;
    std::ptrdiff_t db = static_cast<std::ptrdiff_t>(b.size()) - 1 - off;
    std::int64_t sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
    PARITY_CHECK(sa == sb || sa == 1 || sb == 1, ErrorKind::Shape,
          "The size of tensor a (" + std::to_string(sa) + ") must match the size of tensor b (" +
              std::to_string(sb) + ") at non-singleton dimension " + std::to_string(i));
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

Dims infer_view_size(const Dims& shape, std::int64_t numel, TorchVersion release) {
  Dims out = shape;
  std::int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) fail(ErrorKind::Shape, "only one dimension can be inferred", plain_runtime_error_class(release));
      infer = i;
    } else {
      PARITY_CHECK(shape[i] >= 0, ErrorKind::Argument, "invalid shape dimension " + std::to_string(shape[i]));
      known *= shape[i];
    }
  }
  bool ok = numel == known || (infer && known > 0 && numel % known == 0);
  if (!ok)
    fail(ErrorKind::Shape, "shape '" + format_dims(shape) + "' is invalid for input of size " + std::to_string(numel),
         plain_runtime_error_class(release));
  if (infer) {
    // Inferring a dim for an empty input is ambiguous (any size would do).
    PARITY_CHECK(known != 0, ErrorKind::Shape,
          "cannot reshape tensor of 0 elements into shape " + format_dims(shape) +
              " because the unspecified dimension size -1 can be any value and is ambiguous");
    out[*infer] = numel / known;
  }
  return out;
}

std::optional<Dims> view_strides(const Layout& from, const Dims& newshape) {
  const Dims& oldshape = from.sizes;
  const Dims& oldstride = from.strides;
  if (oldshape.empty()) return Dims(newshape.size(), 1);
  std::int64_t numel = from.numel();
  if (numel == 0 && oldshape == newshape) return oldstride;
  Dims newstride(newshape.size());
  if (numel == 0) {
    for (std::int64_t d = static_cast<std::int64_t>(newshape.size()) - 1; d >= 0; --d) {
      if (d == static_cast<std::int64_t>(newshape.size()) - 1) newstride[d] = 1;
      else newstride[d] = std::max<std::int64_t>(newshape[d + 1], 1) * newstride[d + 1];
    }
    return newstride;
  }
  std::int64_t view_d = static_cast<std::int64_t>(newshape.size()) - 1;
  std::int64_t chunk_base_stride = oldstride.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t tensor_d = static_cast<std::int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

namespace geometry {

Layout view(const Layout& in, const Dims& sizes, TorchVersion release) {
  Dims shape = infer_view_size(sizes, in.numel(), release);
  auto strides = view_strides(in, shape);
  PARITY_CHECK(strides.has_value(), ErrorKind::ViewStride,
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
        "two contiguous subspaces). Use .reshape(...) instead.");
  return Layout{shape, *strides, in.offset};
}

Layout transpose(const Layout& in, std::int64_t d0, std::int64_t d1) {
  d0 = wrap_dim(d0, in.dim());
  d1 = wrap_dim(d1, in.dim());
  Layout out = in;
  if (in.dim() > 0) {
    std::swap(out.sizes[d0], out.sizes[d1]);
    std::swap(out.strides[d0], out.strides[d1]);
  }
  return out;
}

Layout permute(const Layout& in, const Dims& dims) {
  // LibTorch 1.13's wording, "sparse_coo" included: the dense and sparse paths share the check.
  PARITY_CHECK(static_cast<std::int64_t>(dims.size()) == in.dim(), ErrorKind::Shape,
               "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
               "ordering of dimensions i.e. input.dim() = " +
                   std::to_string(in.dim()) + " is not equal to len(dims) = " + std::to_string(dims.size()));
  Layout out = in;
  std::vector<bool> seen(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    auto d = wrap_dim(dims[i], in.dim());
    PARITY_CHECK(!seen[d], ErrorKind::IndexRange, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    out.sizes[i] = in.sizes[d];
    out.strides[i] = in.strides[d];
  }
  return out;
}

Layout slice(const Layout& in, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  PARITY_CHECK_AS(in.dim() > 0, ErrorKind::IndexRange, IndexError, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, in.dim());
  PARITY_CHECK(step > 0, ErrorKind::Argument, "slice step must be positive");
  std::int64_t n = in.sizes[dim];
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (start < 0) start = 0;
  else if (start >= n) start = n;
  if (end < start) end = start;
  else if (end >= n) end = n;
  Layout out = in;
  out.offset += start * in.strides[dim];
  // Rounded-up length, wrapping like LibTorch's int64 arithmetic for absurd steps: the result is then refused
  // the way as_strided refuses it.
  auto wrapped = static_cast<std::int64_t>(static_cast<std::uint64_t>(end - start) + static_cast<std::uint64_t>(step) - 1);
  out.sizes[dim] = wrapped / step;
  out.strides[dim] = static_cast<std::int64_t>(static_cast<std::uint64_t>(out.strides[dim]) * static_cast<std::uint64_t>(step));
  PARITY_CHECK(out.sizes[dim] >= 0, ErrorKind::Argument,
        "Storage size calculation overflowed with sizes=" + format_dims(out.sizes) + " and strides=" +
            format_dims(out.strides));
  return out;
}

Layout select(const Layout& in, std::int64_t dim, std::int64_t index) {
  PARITY_CHECK_AS(in.dim() > 0, ErrorKind::IndexRange, IndexError, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, in.dim());
  std::int64_t n = in.sizes[dim];
  PARITY_CHECK_AS(index >= -n && index < n, ErrorKind::IndexRange, IndexError,
        "select(): index " + std::to_string(index) + " out of range for tensor of size " + format_dims(in.sizes) +
            " at dimension " + std::to_string(dim));
  if (index < 0) index += n;
  Layout out = in;
  out.offset += index * in.strides[dim];
  out.sizes.erase(out.sizes.begin() + dim);
  out.strides.erase(out.strides.begin() + dim);
  return out;
}

Layout narrow(const Layout& in, std::int64_t dim, std::int64_t start, std::int64_t length, TorchVersion release) {
  PARITY_CHECK(in.dim() > 0, ErrorKind::IndexRange, "narrow() cannot be applied to a 0-dim tensor.");
  const bool checks_start = follows(VersionGate::NarrowChecksLengthAndStart, release);
  if (checks_start) PARITY_CHECK(length >= 0, ErrorKind::Argument, "narrow(): length must be non-negative.");
  dim = wrap_dim(dim, in.dim());
  std::int64_t n = in.sizes[dim];
  if (checks_start) {
    PARITY_CHECK_AS(-n <= start && start <= n, ErrorKind::IndexRange, IndexError,
                 "start out of range (expected to be in range of [" + std::to_string(-n) + ", " + std::to_string(n) +
                     "], but got " + std::to_string(start) + ")");
    if (start < 0) start += n;
  } else if (start != n) {
    start = wrap_dim(start, n);  // start == size is a valid (empty) narrow
  }
  PARITY_CHECK(length >= 0 && start <= n - length, ErrorKind::IndexRange,
        "start (" + std::to_string(start) + ") + length (" + std::to_string(length) + ") exceeds dimension size (" +
            std::to_string(n) + ").");
  return slice(in, dim, start, start + length, 1);
}

namespace {
// LibTorch 1.13 lets a negative size through expand's and unfold's geometry; the tensor it then makes counts its
// elements in unsigned arithmetic (TensorImpl's safe_compute_numel) and refuses a product that overflows or
// passes int64's maximum, which a negative size (2^64 - n) does unless a 0 size before it keeps the product at 0.
// LibTorch accepts that empty tensor (a bug the known-divergences ledger records); impl refuses it afterwards,
// as its factories refuse negative sizes.
void check_numel_and_sizes(const Dims& sizes) {
  std::uint64_t numel = 1;
  bool overflow = false;
  for (auto s : sizes) overflow |= __builtin_mul_overflow(numel, static_cast<std::uint64_t>(s), &numel);
  PARITY_CHECK(!overflow && numel <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
               ErrorKind::Argument, "numel: integer multiplication overflow");
  for (auto s : sizes)
    PARITY_CHECK(s >= 0, ErrorKind::Argument,
                 "Trying to create tensor with negative dimension " + std::to_string(s) + ": " + format_dims(sizes));
}
}  // namespace

Layout expand(const Layout& in, const Dims& sizes, const std::string& type_for_message) {
  PARITY_CHECK(sizes.size() >= in.sizes.size(), ErrorKind::Shape,
        "expand(" + type_for_message + "{" + format_dims(in.sizes) + "}, size=" + format_dims(sizes) +
            "): the number of sizes provided (" + std::to_string(sizes.size()) +
            ") must be greater or equal to the number of dimensions in the tensor (" + std::to_string(in.dim()) + ")");
  const std::int64_t ndim = static_cast<std::int64_t>(sizes.size());
  if (in.dim() == 0) {  // every dim is new: all strides 0, sizes as asked
    check_numel_and_sizes(sizes);
    return Layout{sizes, Dims(sizes.size(), 0), in.offset};
  }
  Layout out{Dims(ndim), Dims(ndim), in.offset};
  for (std::int64_t i = ndim - 1; i >= 0; --i) {
    std::int64_t off = ndim - 1 - i;
    std::int64_t d = in.dim() - 1 - off;
    std::int64_t size = d >= 0 ? in.sizes[d] : 1;
    std::int64_t stride = d >= 0 ? in.strides[d] : (i + 1 < ndim ? out.sizes[i + 1] * out.strides[i + 1] : 1);
    std::int64_t target = sizes[i];
    if (target == -1) {
      PARITY_CHECK(d >= 0, ErrorKind::Shape,
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension " +
                std::to_string(i));
      target = size;
    }
    if (size != target) {
      PARITY_CHECK(size == 1, ErrorKind::Shape,
            "The expanded size of the tensor (" + std::to_string(target) + ") must match the existing size (" +
                std::to_string(size) + ") at non-singleton dimension " + std::to_string(i) +
                ".  Target sizes: " + format_dims(sizes) + ".  Tensor sizes: " + format_dims(in.sizes));
      size = target;
      stride = 0;
    }
    out.sizes[i] = size;
    out.strides[i] = stride;
  }
  check_numel_and_sizes(out.sizes);
  return out;
}

Layout squeeze(const Layout& in) {
  Layout out{{}, {}, in.offset};
  for (std::size_t i = 0; i < in.sizes.size(); ++i)
    if (in.sizes[i] != 1) {
      out.sizes.push_back(in.sizes[i]);
      out.strides.push_back(in.strides[i]);
    }
  return out;
}

Layout squeeze(const Layout& in, std::int64_t dim) {
  dim = wrap_dim(dim, in.dim());
  Layout out = in;
  if (in.dim() > 0 && in.sizes[dim] == 1) {
    out.sizes.erase(out.sizes.begin() + dim);
    out.strides.erase(out.strides.begin() + dim);
  }
  return out;
}

Layout unsqueeze(const Layout& in, std::int64_t dim) {
  dim = wrap_dim(dim, in.dim() + 1);
  Layout out = in;
  std::int64_t stride = dim >= in.dim() ? 1 : in.sizes[dim] * in.strides[dim];
  out.sizes.insert(out.sizes.begin() + dim, 1);
  out.strides.insert(out.strides.begin() + dim, stride);
  return out;
}

namespace {
// at::detail::computeStorageNbytes: unsigned arithmetic, and a result past int64's maximum counts as overflow, so
// a negative size overflows where its stride is not 0 (and not where it is); any size 0 needs no storage at all.
// With an offset (2.x's checkInBoundsForStorage) it starts from offset + 1 in that arithmetic, unchecked: a
// negative offset wraps, and overflows the sum unless it is -1 and wraps to 0 there. A 0-dim tensor's strides
// are an empty list, which LibTorch takes for none: its computeStorageNbytesContiguous checks the offset's sum,
// and names no strides.
std::uint64_t storage_nbytes(const Dims& sizes, const Dims& strides, std::size_t itemsize, std::int64_t offset = 0) {
  if (sizes.empty()) {
    std::uint64_t bytes = 0;
    bool overflow = __builtin_add_overflow(std::uint64_t{1}, static_cast<std::uint64_t>(offset), &bytes);
    overflow |= __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(itemsize), &bytes);
    overflow |= bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    PARITY_CHECK(!overflow, ErrorKind::Argument, "Storage size calculation overflowed with sizes=[]");
    return bytes;
  }
  std::uint64_t bytes = static_cast<std::uint64_t>(offset) + 1;
  bool overflow = false;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    std::uint64_t reach = 0;
    overflow |= __builtin_mul_overflow(static_cast<std::uint64_t>(strides[i]), static_cast<std::uint64_t>(sizes[i] - 1),
                                       &reach);
    overflow |= __builtin_add_overflow(bytes, reach, &bytes);
  }
  overflow |= __builtin_mul_overflow(bytes, static_cast<std::uint64_t>(itemsize), &bytes);
  overflow |= bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());  // storage_max()
  PARITY_CHECK(!overflow, ErrorKind::Argument,
               "Storage size calculation overflowed with sizes=" + format_dims(sizes) + " and strides=" +
                   format_dims(strides));
  return bytes;
}
// int64 arithmetic that wraps like LibTorch's does for absurd arguments, which the size checks then refuse.
std::int64_t wrapping_sub(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
std::int64_t wrapping_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
}  // namespace

Layout diagonal(const Layout& in, std::int64_t offset, std::int64_t dim1_arg, std::int64_t dim2_arg) {
  std::int64_t dim1 = wrap_dim(dim1_arg, in.dim());
  std::int64_t dim2 = wrap_dim(dim2_arg, in.dim());
  // The message names the dims as given, not wrapped.
  PARITY_CHECK(dim1 != dim2, ErrorKind::Argument,
        "diagonal dimensions cannot be identical " + std::to_string(dim1_arg) + ", " + std::to_string(dim2_arg));
  std::int64_t n1 = in.sizes[dim1], n2 = in.sizes[dim2];
  std::int64_t diag_size = std::max<std::int64_t>(offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2), 0);
  Layout out = in;
  if (diag_size > 0) out.offset += offset >= 0 ? offset * in.strides[dim2] : -offset * in.strides[dim1];
  std::int64_t stride = in.strides[dim1] + in.strides[dim2];
  for (std::int64_t d : {std::max(dim1, dim2), std::min(dim1, dim2)}) {
    out.sizes.erase(out.sizes.begin() + d);
    out.strides.erase(out.strides.begin() + d);
  }
  out.sizes.push_back(diag_size);
  out.strides.push_back(stride);
  return out;
}

Layout t(const Layout& in) {
  PARITY_CHECK(in.dim() <= 2, ErrorKind::Shape,
        "t() expects a tensor with <= 2 dimensions, but self is " + std::to_string(in.dim()) + "D");
  return transpose(in, 0, in.dim() < 2 ? 0 : 1);
}

Layout unfold(const Layout& in, std::int64_t dim, std::int64_t size, std::int64_t step, TorchVersion release) {
  dim = wrap_dim(dim, in.dim());
  if (follows(VersionGate::UnfoldChecksSize, release))
    PARITY_CHECK(size >= 0, ErrorKind::Argument, "size is " + std::to_string(size) + " but must be >= 0");
  std::int64_t max_size = in.dim() == 0 ? 1 : in.sizes[dim];
  PARITY_CHECK(size <= max_size, ErrorKind::Shape,
        "maximum size for tensor at dimension " + std::to_string(dim) + " is " + std::to_string(max_size) +
            " but size is " + std::to_string(size));
  PARITY_CHECK(step > 0, ErrorKind::Argument, "step is " + std::to_string(step) + " but must be > 0");
  Layout out = in;
  if (in.dim() > 0) {
    out.sizes[dim] = wrapping_sub(in.sizes[dim], size) / step + 1;
    out.strides[dim] = wrapping_mul(step, in.strides[dim]);
  }
  out.sizes.push_back(size);
  out.strides.push_back(in.dim() == 0 ? 1 : in.strides[dim]);
  return out;  // unchecked: the op checks it against its storage as as_strided does (LibTorch builds it so)
}

Layout as_strided(const Dims& sizes, const Dims& strides, std::int64_t offset, std::int64_t storage_numel,
                  std::size_t itemsize, TorchVersion release) {
  // LibTorch 1.13's setStrided, in its order: strides, storage size, bounds, offset, then the element count. 2.x
  // checks the offset right after the strides (VersionGate::AsStridedChecksOffsetFirst).
  PARITY_CHECK(sizes.size() == strides.size(), ErrorKind::Shape, "mismatch in length of strides and shape");
  for (auto s : strides)
    PARITY_CHECK(s >= 0, ErrorKind::Argument,
                 "as_strided: Negative strides are not supported at the moment, got strides: " + format_dims(strides));
  if (follows(VersionGate::AsStridedChecksOffsetFirst, release))
    PARITY_CHECK(offset >= 0, ErrorKind::Argument, "Tensor: invalid storage offset " + std::to_string(offset));
  const auto isz = static_cast<std::int64_t>(itemsize);
  const auto need = static_cast<std::int64_t>(storage_nbytes(sizes, strides, itemsize));
  // 2.x sizes the storage with the offset in the same unsigned arithmetic (VersionGate::StorageBoundsCountTheOffset).
  const std::int64_t need_with_offset = follows(VersionGate::StorageBoundsCountTheOffset, release)
                                            ? static_cast<std::int64_t>(storage_nbytes(sizes, strides, itemsize, offset))
                                            : need + offset * isz;
  if (need != 0) {
    PARITY_CHECK(need_with_offset <= storage_numel * isz, ErrorKind::StorageBounds,
                 "setStorage: sizes " + format_dims(sizes) + ", strides " + format_dims(strides) + ", storage offset " +
                     std::to_string(offset) + ", and itemsize " + std::to_string(isz) + " requiring a storage size of " +
                     std::to_string(need_with_offset) + " are out of bounds for storage of size " +
                     std::to_string(storage_numel * isz));
  }
  PARITY_CHECK(offset >= 0, ErrorKind::Argument, "Tensor: invalid storage offset " + std::to_string(offset));
  check_numel_and_sizes(sizes);
  return Layout{sizes, strides, offset};
}

}  // namespace geometry
}  // namespace parity::impl
