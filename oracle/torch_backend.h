// The LibTorch Backend: runs Programs on PyTorch's C++ library, the judge of every semantic.
// This header is torch-free; only oracle/*.cpp include torch headers.
#pragma once
#include <memory>
#include <string>

#include "program/backend.h"

namespace parity::oracle {

std::unique_ptr<program::Backend> make_torch_backend();
std::string torch_version();  // e.g. "1.13.1"

}  // namespace parity::oracle
