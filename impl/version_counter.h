// One version counter per storage lineage: views and detach() share it, variable_data() gets a new one.
// Every in-place op bumps it; saved tensors remember the value they were saved at.
#pragma once
#include <cstdint>

#include "impl/rc.h"

namespace parity::impl {

class VersionCounter {
 public:
  VersionCounter() : value_(make_rc<std::uint32_t>(0u)) {}
  std::uint32_t current() const { return *value_; }
  void bump() { ++*value_; }
  bool shares_with(const VersionCounter& o) const { return value_ == o.value_; }

 private:
  Rc<std::uint32_t> value_;
};

}  // namespace parity::impl
