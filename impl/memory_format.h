// Memory formats and the stride rules PyTorch derives from them (c10/core/MemoryFormat.h, TensorImpl).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "impl/dims.h"

namespace parity::impl {

enum class MemoryFormat : std::uint8_t { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };


// Strides of a freshly allocated tensor in `format` (empty_tensor_restride): contiguous strides treat size-0
// dims as 1, channels-last strides use the raw sizes. Raises MemoryFormat for a rank the format cannot hold.
Dims strides_for(const Dims& sizes, MemoryFormat format);

// Whether strides look like channels_last(_3d): PyTorch's heuristic, with its tie-breaks for size-1 dims.
bool is_channels_last_strides_2d(const Dims& sizes, const Dims& strides);
bool is_channels_last_strides_3d(const Dims& sizes, const Dims& strides);

// TensorIterator's dimension order, fastest first: an insertion sort starting from the reversed dims, where
// should_swap(d0, d1) > 0 moves d1 before d0, < 0 stops, and 0 (ambiguous) keeps looking further left.
std::vector<std::size_t> sort_dims(std::size_t ndim, const std::function<int(std::size_t, std::size_t)>& should_swap);

// Strides of a dense tensor that keeps the dimension order of (sizes, strides) (infer_dense_strides).
Dims infer_dense_strides(const Dims& sizes, const Dims& strides);

}  // namespace parity::impl
