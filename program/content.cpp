#include "program/content.h"

#include "program/splitmix.h"

namespace parity::program {

std::vector<double> seeded_content(std::uint64_t seed, std::int64_t count, DType dtype) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count > 0 ? count : 0));
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t r = splitmix64(seed * 0x100000001b3ULL + static_cast<std::uint64_t>(i));
    switch (dtype) {
      case DType::Bool: out.push_back(static_cast<double>(r & 1)); break;
      case DType::Int32:
      case DType::Int64: out.push_back(static_cast<double>(static_cast<std::int64_t>(r % 13) - 6)); break;
      default: out.push_back(static_cast<double>(static_cast<std::int64_t>(r % 25) - 12) / 4.0); break;
    }
  }
  return out;
}

}  // namespace parity::program
