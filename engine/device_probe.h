// Whether both backends can run cuda steps here, asked in a child process: CUDA does not survive fork(), and the
// campaign forks its workers after asking, so the asking process must never initialise CUDA itself.
#pragma once
#include <optional>
#include <string>

#include "reports/oracle.h"

namespace parity::engine {

struct CudaProbe {
  int impl_devices = 0;    // impl's view (0 in a build without nvcc)
  int oracle_devices = 0;  // LibTorch's (0 unless linked with torch_cuda, PARITY_ORACLE_CUDA)
  // Why campaigns on cuda judged by `oracle` cannot run here, one sentence per backend that lacks a device; nullopt
  // when every backend that needs one has one (impl-cpu needs none: its cuda is host memory).
  std::optional<std::string> refusal(reports::Oracle oracle = reports::Oracle::LibTorch) const;
};

CudaProbe probe_cuda();

}  // namespace parity::engine
