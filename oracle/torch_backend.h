// The LibTorch Backend: runs Programs on PyTorch's C++ library, the judge of every semantic.
// This header is torch-free; only oracle/*.cpp include torch headers.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "program/backend.h"

namespace parity::oracle {

std::unique_ptr<program::Backend> make_torch_backend();
std::string torch_version();  // e.g. "1.13.1"
// The schema LibTorch's dispatcher registers for `name` ("aten::add_") and `overload` ("Tensor", "" for the
// default), as text; nullopt when it registers no such operator.
std::optional<std::string> registered_schema(const std::string& name, const std::string& overload);

}  // namespace parity::oracle
