// impl's CUDA: where a cuda tensor's memory comes from, the launches of impl/kernels' kernels (the functors the CPU
// executor runs) over it, and transfers between the host and it. A cuda tensor lives in the device's memory
// (impl/cuda/device.h), or, under a HostBackedScope, in host memory: a cuda tensor in every way impl's ops can
// see (its device, the device rules and kernel dispatch of its ops, its transfers), whose kernels the CPU runs.
// That is how impl's CUDA logic runs without a GPU, and how a campaign compares impl's device against impl on the
// CPU with the device's semantics (`parity fuzz --device cuda --reference impl-cpu`).
#pragma once
#include <cstdint>
#include <optional>

#include "impl/kernels/index.h"
#include "impl/kernels/matmul.h"
#include "impl/kernels/pointwise.h"
#include "impl/kernels/reduce.h"
#include "impl/tensor.h"

namespace parity::impl::cuda {

int device_count();  // CUDA devices present: 0 when the driver or a device is missing (never throws)
// Whether the process's CUDA context still runs work: false after a sticky error (a device-side assert, an illegal
// address), which fails every later CUDA call of the process, LibTorch's too (they share the primary context).
// Never throws; true in a build without CUDA.
bool context_usable();
// Waits for every kernel and copy queued on the device, by anyone in this process (LibTorch's work shares the
// primary context); one that failed raises a Device error. Nothing to wait for without a device.
void synchronize();

// While one lives on this thread, new cuda storages are host memory (cuda_allocator()). Launches and transfers
// follow a tensor's storage, not the scope, but an op's new outputs follow the scope: host-backed tensors are
// used under one, as an impl session that runs on host-backed memory keeps one around each of its calls (impl
// objects stay on their thread, so a thread-local scope decides for everything the session makes).
class HostBackedScope {
 public:
  HostBackedScope();
  ~HostBackedScope();
  HostBackedScope(const HostBackedScope&) = delete;
  HostBackedScope& operator=(const HostBackedScope&) = delete;

 private:
  bool previous_;
};
bool host_backed();  // a HostBackedScope lives on this thread

// A pointwise call or a sum writing `out` (a cuda tensor); its operands are in memory of out's kind. On the device
// it is queued, not waited for (impl/cuda/device.h), and a CUDA error raises a Device error. Host-backed, the CPU
// runs the kernels: the CPU executor for pointwise ones (whose bits the tests hold equal to the device launcher's),
// and the device's order for a sum (kernels::DeviceSumPlan: lanes and trees, one step at a time), which is not the
// CPU executor's.
void run_pointwise(const kernels::PointwiseCall& call, const Tensor& out);
void run_sum(const kernels::SumCall& call, const Tensor& out);
// mm/bmm (impl/kernels/matmul.h), as impl::cpu::matmul on the CPU; all three tensors cuda, in memory of one kind.
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, impl::kernels::MatmulRounding rounding);

// Advanced indexing on cuda memory of the kind `self`'s is (impl/kernels/index.h: the device launches it,
// host-backed memory runs the same element functions in a loop). Each returns the first out-of-range index the
// walk meets (a gather's result is then unusable; a scatter wrote every element before it), or nullopt.
std::optional<std::int64_t> gather(const kernels::IndexCall& call, const Tensor& self);
std::optional<std::int64_t> scatter(const kernels::IndexCall& call, bool accumulate, const Tensor& self);
// The positions of a bool cuda mask's true elements: int64 (count, mask.dim()) on cuda, row-major order.
Tensor nonzero(const Tensor& mask);

// Host <-> cuda transfers of a whole tensor; the result is dense in the source's layout order, and a new cuda
// tensor is in the memory cuda_allocator() gives.
Tensor to_device(const Tensor& cpu, int device = 0);
// A host tensor of `cuda`'s layout over a copy of its storage's bytes (as far as the layout reaches), and the way
// back: `host`'s bytes into `cuda`'s storage, as far as both reach. Host code runs on such a mirror as on the
// cuda tensor itself.
Tensor to_host(const Tensor& cuda);
void write_back(const Tensor& cuda, const Tensor& host);

}  // namespace parity::impl::cuda
