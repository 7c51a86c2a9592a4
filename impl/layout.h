// Layout: sizes, strides and storage offset, all in elements. The semantics of strided memory live here:
// PyTorch's contiguity predicates and the geometry of every view op, as pure functions of a Layout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/memory_format.h"
#include "impl/torch_version.h"

namespace parity::impl {

struct Layout {
  Dims sizes;
  Dims strides;
  std::int64_t offset = 0;

  static Layout dense(const Dims& sizes, MemoryFormat format = MemoryFormat::Contiguous);
  // A fresh layout in preserve_format: the same strides when dense, else dense in the same dim order.
  Layout preserved() const;
  std::int64_t dim() const { return static_cast<std::int64_t>(sizes.size()); }
  std::int64_t numel() const;
  // Elements of storage the layout reaches, offset included (computeStorageNbytes / itemsize).
  std::int64_t storage_extent() const;

  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const;
  bool is_non_overlapping_and_dense() const;
  bool is_strides_like_channels_last() const;
  bool is_strides_like_channels_last_3d() const;
  MemoryFormat suggest_memory_format() const;
  bool operator==(const Layout&) const = default;
};

std::string format_dims(const Dims&);  // "[2, 3]"

// maybe_wrap_dim: a 0-d tensor accepts dims -1 and 0 when wrap_scalar (size(dim) does not).
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, bool wrap_scalar = true);
// Broadcast shape of two shapes (infer_size); raises Shape with PyTorch's message.
Dims broadcast_shapes(const Dims& a, const Dims& b);
// Resolves one -1 against numel (infer_size for view/reshape).
Dims infer_view_size(const Dims& shape, std::int64_t numel, TorchVersion release);
// Strides for viewing `from` as `sizes` without copying, if possible (computeStride).
std::optional<Dims> view_strides(const Layout& from, const Dims& sizes);

// The view geometries: pure functions of their arguments. Where PyTorch releases check a view differently, the
// release is an argument (impl/torch_version.h), never read from the thread.
namespace geometry {
Layout view(const Layout&, const Dims& sizes, TorchVersion release);  // raises ViewStride when the strides do not allow it
Layout transpose(const Layout&, std::int64_t d0, std::int64_t d1);
Layout permute(const Layout&, const Dims& dims);
Layout slice(const Layout&, std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step);
Layout select(const Layout&, std::int64_t dim, std::int64_t index);
Layout narrow(const Layout&, std::int64_t dim, std::int64_t start, std::int64_t length, TorchVersion release);
Layout expand(const Layout&, const Dims& sizes, const std::string& type_for_message);
Layout squeeze(const Layout&);
Layout squeeze(const Layout&, std::int64_t dim);
Layout unsqueeze(const Layout&, std::int64_t dim);
// The diagonal of dims dim1 and dim2, appended as the last dim (empty, at the input's offset, when `offset`
// leaves the matrix).
Layout diagonal(const Layout&, std::int64_t offset, std::int64_t dim1, std::int64_t dim2);
// t(): transpose of dims 0 and 1 for 2-d, the same geometry for 0-d and 1-d.
Layout t(const Layout&);
// Windows of `size` every `step` along dim, as a new last dim (a 0-d input is one window of at most 1).
Layout unfold(const Layout&, std::int64_t dim, std::int64_t size, std::int64_t step, TorchVersion release);
// as_strided within a storage of `storage_numel` elements.
Layout as_strided(const Dims& sizes, const Dims& strides, std::int64_t offset, std::int64_t storage_numel,
                  std::size_t itemsize, TorchVersion release);
}  // namespace geometry

}  // namespace parity::impl
