// The LibTorch Backend: runs Programs on PyTorch's C++ library, the judge of every semantic.
// This header is torch-free; only oracle/*.cpp include torch headers.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "judge/backend.h"

namespace parity::oracle {

std::unique_ptr<judge::Backend> make_torch_backend();
std::string torch_version();  // e.g. "1.13.1"
// How many CUDA devices LibTorch sees: 0 unless this build links a CUDA LibTorch's torch_cuda (CMake option
// PARITY_ORACLE_CUDA) and the machine has a device. Initialises CUDA: never call it in a process that forks after.
int cuda_device_count();
// Whether the oracle was linked with torch_cuda (PARITY_ORACLE_CUDA).
bool linked_with_cuda();
// The schema LibTorch's dispatcher registers for `name` ("aten::add_") and `overload` ("Tensor", "" for the
// default), as text; nullopt when it registers no such operator.
std::optional<std::string> registered_schema(const std::string& name, const std::string& overload);

}  // namespace parity::oracle
