// Stride arithmetic as PyTorch does it (c10/core/TensorImpl, MemoryFormat.h, ATen's infer_dense_strides), in
// plain integers, so that generators can build layouts and properties can state expected layouts without a
// tensor library. Each function names the PyTorch routine it mirrors; the quirks (size-1 and size-0 dims,
// stride-0 dims) are PyTorch's and are kept on purpose.
#pragma once
#include <cstdint>
#include <vector>

#include "program/program.h"

namespace parity::generators {

using Dims = std::vector<std::int64_t>;

// Row-major strides; a size-0 or size-1 dim counts as 1 for the dims before it (empty_tensor_restride).
using program::contiguous_strides;
// get_channels_last_strides_2d (4-d) and get_channels_last_strides_3d (5-d): sizes are multiplied as they are.
Dims channels_last_strides(const Dims& sizes);
Dims channels_last_3d_strides(const Dims& sizes);

// TensorImpl::compute_contiguous: size-1 dims are ignored, an empty tensor is contiguous.
bool is_contiguous(const Dims& sizes, const Dims& strides);
// compute_channels_last_contiguous_2d / _3d: size-1 dims are ignored.
bool is_channels_last_contiguous(const Dims& sizes, const Dims& strides);
bool is_channels_last_3d_contiguous(const Dims& sizes, const Dims& strides);
// is_channels_last_strides_2d / _3d: the "strides look like channels_last" test behind suggest_memory_format.
bool is_channels_last_strides(const Dims& sizes, const Dims& strides);
bool is_channels_last_3d_strides(const Dims& sizes, const Dims& strides);
// TensorImpl's is_non_overlapping_and_dense flag: contiguous in some format (so every empty tensor), or
// compute_non_overlapping_and_dense.
bool is_non_overlapping_and_dense(const Dims& sizes, const Dims& strides);
// at::infer_dense_strides: dense strides keeping the input's stride order (TensorIterator's permutation rule,
// stride-0 dims stay where they are).
Dims infer_dense_strides(const Dims& sizes, const Dims& strides);

// Whether two distinct indices reach the same element (exact; shared with the run loop).
using program::has_internal_overlap;
std::int64_t numel(const Dims& sizes);

}  // namespace parity::generators
