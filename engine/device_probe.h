// Whether both backends can run cuda steps here, asked in a child process: CUDA does not survive fork(), and the
// campaign forks its workers after asking, so the asking process must never initialise CUDA itself.
#pragma once
#include <optional>
#include <string>

namespace parity::engine {

struct CudaProbe {
  int impl_devices = 0;    // impl's view (0 in a build without nvcc)
  int oracle_devices = 0;  // LibTorch's (0 unless linked with torch_cuda, PARITY_ORACLE_CUDA)
  // Why campaigns on cuda cannot run here, one sentence per backend that lacks a device; nullopt when both have one.
  std::optional<std::string> refusal() const;
};

CudaProbe probe_cuda();

}  // namespace parity::engine
