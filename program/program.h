// A Program is plain data: a list of steps, each an op from the op table applied to earlier values.
// Step i produces value i (or no value: backward, retain_grad, or a step that raised).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "program/op_table.h"
#include "program/types.h"

namespace parity::program {

// Attributes of a step; which ones an op reads is listed in its OpSpec, and only those are serialised.
struct Attrs {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::vector<std::int64_t> dims;
  std::int64_t dim = 0;
  std::int64_t dim1 = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::int64_t step = 1;
  std::int64_t index = 0;
  std::int64_t length = 0;
  std::int64_t high = 1;  // randint_like's exclusive upper bound
  Scalar scalar;
  std::optional<Scalar> min, max;  // clamp bounds; nullopt is Python's None
  std::vector<Scalar> elements;    // tensor's literal list, flat and row-major: its nesting is `sizes`
  std::int64_t size = 1;           // unfold window, split size
  std::int64_t chunks = 1;
  bool copy = false;               // to(..., copy=)
  std::int64_t memo = 0;           // deepcopy: steps with one memo are one copy.deepcopy call
  MemoryFormat memory_format = MemoryFormat::Preserve;
  DType dtype = DType::Float32;
  Device device = Device::CPU;             // factories' device=, to(device)
  std::optional<Device> like_device;       // the _like factories' device=; nullopt is None: the operand's device
  bool requires_grad = false;
  bool keepdim = false;
  bool retain_graph = false;
  bool accumulate = false;
  bool allow_unused = false;
  bool create_graph = false;
  std::uint64_t seed = 0;
  bool operator==(const Attrs&) const = default;
};

struct Step {
  OpId op = OpId::Zeros;
  std::vector<int> inputs;  // value ids (indices of earlier steps)
  Attrs attrs;
  bool grad_enabled = true;  // false: the step runs under a no-grad guard
  bool operator==(const Step&) const = default;
};

struct Program {
  std::vector<Step> steps;
  bool operator==(const Program&) const = default;
};

// Whether any step puts a tensor on cuda: only factories' device=, the _like factories' and to(device) can.
inline bool uses_cuda(const Program& p) {
  for (const Step& s : p.steps)
    if (s.attrs.device == Device::CUDA || s.attrs.like_device == Device::CUDA) return true;
  return false;
}

// Row-major strides; a size-0 or size-1 dim counts as 1 for the dims before it (PyTorch's empty_tensor_restride).
inline std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t s = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

// Number of elements a strided layout reaches in its storage (0 when the tensor is empty and offset is 0).
std::int64_t storage_extent(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                            std::int64_t offset);

// Whether two elements of a strided layout share memory, decided exactly (by enumerating the elements).
// LibTorch only proves the zero-stride case and leaves other in-place writes into such memory undefined.
bool has_internal_overlap(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides);

// Whether two strided layouts over one storage (offsets and strides in its elements) reach a common element,
// decided exactly. PyTorch's get_overlap_status answers only for dense layouts ("too hard" otherwise); this is
// the question behind it, asked of any layout: do the writes of one touch what the other reads.
bool layouts_share_memory(const std::vector<std::int64_t>& sizes_a, const std::vector<std::int64_t>& strides_a,
                          std::int64_t offset_a, const std::vector<std::int64_t>& sizes_b,
                          const std::vector<std::int64_t>& strides_b, std::int64_t offset_b);

}  // namespace parity::program
