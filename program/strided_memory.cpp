// The memory a strided layout reaches, in elements of its storage (program/program.h declares these): what the
// generator's shape rules and the judge's taint ask of layouts, decided exactly by enumeration where no formula is.
#include <unordered_set>

#include "program/program.h"

namespace parity::program {

std::int64_t storage_extent(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                            std::int64_t offset) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return offset;
    last += (sizes[i] - 1) * (i < strides.size() ? strides[i] : 0);
  }
  return offset + last + 1;
}

namespace {

// Calls visit(offset) for every element of a strided layout, in row-major order, until it returns true.
template <typename Visit>
bool any_element(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                 std::int64_t offset, Visit visit) {
  std::int64_t total = 1;
  for (auto s : sizes) total *= s;
  std::vector<std::int64_t> idx(sizes.size(), 0);
  for (std::int64_t k = 0; k < total; ++k) {
    std::int64_t addr = offset;
    for (std::size_t d = 0; d < sizes.size(); ++d) addr += idx[d] * strides[d];
    if (visit(addr)) return true;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return false;
}

std::int64_t element_count(const std::vector<std::int64_t>& sizes) {
  std::int64_t total = 1;
  for (auto s : sizes) total *= s;
  return total;
}

// The lowest element a layout reaches (its offset plus every negative stride's reach).
std::int64_t first_element(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                           std::int64_t offset) {
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (strides[i] < 0) offset += (sizes[i] - 1) * strides[i];
  return offset;
}

// One past the highest element a layout reaches.
std::int64_t end_element(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                         std::int64_t offset) {
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (strides[i] > 0) offset += (sizes[i] - 1) * strides[i];
  return offset + 1;
}

}  // namespace

bool has_internal_overlap(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides) {
  if (element_count(sizes) <= 1) return false;
  std::unordered_set<std::int64_t> seen;
  return any_element(sizes, strides, 0, [&](std::int64_t addr) { return !seen.insert(addr).second; });
}

bool layouts_share_memory(const std::vector<std::int64_t>& sizes_a, const std::vector<std::int64_t>& strides_a,
                          std::int64_t offset_a, const std::vector<std::int64_t>& sizes_b,
                          const std::vector<std::int64_t>& strides_b, std::int64_t offset_b) {
  const std::int64_t na = element_count(sizes_a), nb = element_count(sizes_b);
  if (na == 0 || nb == 0) return false;
  // Disjoint ranges settle most cases (narrow's halves, unbind's rows) without enumerating.
  if (end_element(sizes_a, strides_a, offset_a) <= first_element(sizes_b, strides_b, offset_b) ||
      end_element(sizes_b, strides_b, offset_b) <= first_element(sizes_a, strides_a, offset_a))
    return false;
  const bool a_smaller = na <= nb;
  std::unordered_set<std::int64_t> seen;
  any_element(a_smaller ? sizes_a : sizes_b, a_smaller ? strides_a : strides_b, a_smaller ? offset_a : offset_b,
              [&](std::int64_t addr) {
                seen.insert(addr);
                return false;
              });
  return any_element(a_smaller ? sizes_b : sizes_a, a_smaller ? strides_b : strides_a,
                     a_smaller ? offset_b : offset_a, [&](std::int64_t addr) { return seen.count(addr) > 0; });
}

}  // namespace parity::program
