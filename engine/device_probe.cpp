#include "engine/device_probe.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "impl_backend/backend.h"
#include "oracle/torch_backend.h"

namespace parity::engine {

std::optional<std::string> CudaProbe::refusal(reports::Oracle oracle) const {
  std::string why;
  if (impl_devices == 0) {
    why += impl_backend::built_with_cuda() ? "impl sees no CUDA device on this machine"
                                           : "impl was built without CUDA (no nvcc at configure time)";
  }
  if (oracle == reports::Oracle::LibTorch && oracle_devices == 0) {
    if (!why.empty()) why += "; ";
    why += oracle::linked_with_cuda()
               ? "LibTorch " + oracle::torch_version() + " sees no CUDA device on this machine"
               : "the oracle links LibTorch " + oracle::torch_version() +
                     "'s CPU libraries only (configure a CUDA LibTorch with -DPARITY_ORACLE_CUDA=ON)";
  }
  if (why.empty()) return std::nullopt;
  return why;
}

CudaProbe probe_cuda() {
  const pid_t child = fork();
  if (child == 0) {
    // Counts are capped so that both fit one exit status.
    const int impl = std::clamp(impl_backend::cuda_device_count(), 0, 7);
    const int torch = std::clamp(oracle::cuda_device_count(), 0, 7);
    _exit(impl | (torch << 3));
  }
  CudaProbe p;
  if (child < 0) return p;  // no process to ask in: no device, which refuses
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
  }
  if (!WIFEXITED(status)) return p;  // a probe that crashed found no usable device
  p.impl_devices = WEXITSTATUS(status) & 7;
  p.oracle_devices = (WEXITSTATUS(status) >> 3) & 7;
  return p;
}

}  // namespace parity::engine
