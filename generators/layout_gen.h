// Layouts of leaf tensors: sizes, strides and an absolute storage offset over a fresh storage (Attr::Strided of
// `rand`), and views inside an existing storage (as_strided). The kinds cover what a tensor library gets wrong:
// memory formats, permutations, steps and offsets, stride-0 expansion, empty tensors, the ambiguous strides of
// size-1 dims, and overlapping memory. Shapes stay small (numel <= kMaxLayoutNumel, ndim <= 5) so that every
// value of every tensor can be observed and compared.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <rapidcheck.h>
#include <string_view>
#include <vector>

#include "generators/rng.h"
#include "generators/strides.h"

namespace parity::generators {

enum class LayoutKind : std::uint8_t {
  Contiguous,
  ChannelsLast,    // 4-d, often with size-1 channels or spatial dims (ambiguous strides)
  ChannelsLast3d,  // 5-d, same
  Permuted,        // dense, dims in another order (transpose is the two-dim case)
  Sliced,          // steps > 1 and/or a nonzero offset over a larger dense base: not dense
  Expanded,        // stride 0 on dims of size > 1
  ZeroSize,        // some dim of size 0
  SizeOne,         // size-1 dims with the strides PyTorch computes, or arbitrary ones
  Overlapping,     // as_strided with distinct indices reaching the same element
};
inline constexpr LayoutKind kAllLayoutKinds[] = {
    LayoutKind::Contiguous, LayoutKind::ChannelsLast, LayoutKind::ChannelsLast3d,
    LayoutKind::Permuted,   LayoutKind::Sliced,       LayoutKind::Expanded,
    LayoutKind::ZeroSize,   LayoutKind::SizeOne,      LayoutKind::Overlapping};
std::string_view to_string(LayoutKind);

// What a generator chose for one tensor: the kind and the strided geometry it stands for (plain integers;
// impl::Layout is impl's own tensor geometry).
struct LayoutSpec {
  LayoutKind kind = LayoutKind::Contiguous;
  Dims sizes;
  Dims strides;
  std::int64_t offset = 0;  // absolute, in elements
  bool operator==(const LayoutSpec&) const = default;
};
void showValue(const LayoutSpec&, std::ostream&);  // RapidCheck counterexamples
// The contiguous layout of l's sizes, at offset 0 (what a layout shrinks to).
LayoutSpec contiguous_of(const LayoutSpec& l);

inline constexpr std::int64_t kMaxLayoutNumel = 48;

// Sizes >= 1 with at most `max_numel` elements, biased towards 1 and 2.
Dims random_sizes(Rng&, int ndim, std::int64_t max_numel = kMaxLayoutNumel);
// A shape for a fresh tensor: ndim 0..4, sometimes with a size-0 dim.
Dims random_shape(Rng&);

LayoutSpec random_layout(Rng&);
LayoutSpec random_layout(Rng&, LayoutKind);
// A layout with exactly these sizes, of a kind these sizes allow, within the storage a program may hold
// (program::kMaxNumel).
LayoutSpec random_layout_for(Rng&, const Dims& sizes);
// as_strided arguments reaching only elements [0, storage_numel) of a storage.
LayoutSpec random_view_within(Rng&, std::int64_t storage_numel);

// RapidCheck generators over random_layout; a layout shrinks to the contiguous layout of its sizes.
rc::Gen<LayoutSpec> layouts();
rc::Gen<LayoutSpec> layouts(std::vector<LayoutKind> kinds);

}  // namespace parity::generators
