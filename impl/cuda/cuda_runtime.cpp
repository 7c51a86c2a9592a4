#include "impl/cuda/cuda_runtime.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "impl/cpu/kernels.h"
#include "impl/cpu/matmul.h"
#include "impl/cuda/device.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/storage.h"

namespace parity::impl {

namespace {

thread_local bool t_host_backed = false;

// Host memory that is cuda memory to everything above Storage: the CPU allocator's blocks, under the cuda device.
class HostBackedCudaAllocator final : public Allocator {
 public:
  void* allocate(std::size_t nbytes, Fill fill) override { return cpu_allocator().allocate(nbytes, fill); }
  void deallocate(void* p, std::size_t nbytes) noexcept override { cpu_allocator().deallocate(p, nbytes); }
  Device device() const override { return Device{DeviceType::CUDA, 0}; }
  bool host_addressable() const override { return true; }
  void copy(void* dst, const void* src, std::size_t nbytes) const override { std::memcpy(dst, src, nbytes); }
};

}  // namespace

bool cuda_available() { return cuda::device::count() > 0; }

Allocator& cuda_allocator() {
  static HostBackedCudaAllocator host_backed;
  return t_host_backed ? host_backed : cuda::device::allocator();
}

namespace cuda {

int device_count() { return device::count(); }
bool context_usable() { return device::context_usable(); }
void synchronize() {
  if (device::count() > 0) device::synchronize();
}

HostBackedScope::HostBackedScope() : previous_(t_host_backed) { t_host_backed = true; }
HostBackedScope::~HostBackedScope() { t_host_backed = previous_; }
bool host_backed() { return t_host_backed; }

void run_pointwise(const kernels::PointwiseCall& call, const Tensor& out) {
  if (!out.storage().host_addressable()) return device::run_pointwise(call);
  cpu::run_pointwise(call);
}

namespace {
// The device order (kernels::DeviceSumPlan) one step at a time: the same lanes and trees the launcher runs at once.
template <typename T>
void sum_in_device_order(const kernels::SumCall& call) {
  using Op = kernels::SumOp<T>;
  const kernels::DeviceSumPlan plan = kernels::device_sum_plan(call.inner.numel);
  if (plan.blocks == 0) {
    for (std::int64_t i = 0; i < call.outer.numel; ++i)
      kernels::sum_output<T>(call.outer, call.inner, call.out, call.in, i);
    return;
  }
  std::vector<typename Op::acc_t> lanes(static_cast<std::size_t>(plan.lanes()));
  std::int64_t off[kernels::kMaxOperands];
  for (std::int64_t i = 0; i < call.outer.numel; ++i) {
    kernels::offsets(call.outer, i, off);
    const T* x = static_cast<const T*>(call.in) + off[1];
    for (std::int64_t l = 0; l < plan.lanes(); ++l) lanes[l] = kernels::sum_lane(call.inner, x, l, plan.lanes());
    auto tree = [](typename Op::acc_t* p, std::int64_t count) {
      for (std::int64_t half = kernels::tree_top(count); half >= 1; half /= 2)
        for (std::int64_t j = 0; j < half; ++j) kernels::tree_level<typename Op::acc_t, Op>(p, count, half, j);
    };
    for (std::int64_t b = 0; b < plan.blocks; ++b) {
      tree(lanes.data() + b * kernels::kDeviceSumBlockLanes, kernels::kDeviceSumBlockLanes);
      lanes[b] = lanes[b * kernels::kDeviceSumBlockLanes];  // block b's partial, where the device keeps it
    }
    tree(lanes.data(), plan.blocks);
    static_cast<typename Op::out_t*>(call.out)[off[0]] = Op::project(lanes[0]);
  }
}
}  // namespace

void run_sum(const kernels::SumCall& call, const Tensor& out) {
  if (!out.storage().host_addressable()) return device::run_sum(call);
  dispatch(call.dtype, [&](auto tag) { sum_in_device_order<decltype(tag)>(call); });
}

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, impl::kernels::MatmulRounding rounding) {
  const bool host = out.storage().host_addressable();
  PARITY_INTERNAL_ASSERT(a.storage().host_addressable() == host && b.storage().host_addressable() == host,
                         "a cuda matmul's operands are in memory of two kinds (device and host-backed)");
  if (!host) return device::matmul(out, a, b, rounding);
  // The device's and the CPU executor's elements each sum their products alone, k ascending: the same bits.
  cpu::matmul(out, a, b, rounding);
}

namespace {
// The index at walk position `linear` of a call whose index operand is in memory of `self`'s kind.
std::int64_t index_at(const kernels::IndexCall& call, std::int64_t linear, const Tensor& self) {
  const std::int64_t* p = call.index + kernels::index_offset(call, linear);
  if (self.storage().host_addressable()) return *p;
  std::int64_t v = 0;
  device::download(&v, p, sizeof v);
  return v;
}
}  // namespace

std::optional<std::int64_t> gather(const kernels::IndexCall& call, const Tensor& self) {
  std::int64_t bad = -1;
  if (!self.storage().host_addressable()) {
    bad = device::gather(call);
  } else {
    dispatch(call.dtype, [&](auto tag) {
      for (std::int64_t k = 0; k < call.geometry.numel && bad < 0; ++k)
        if (!kernels::gather_element<decltype(tag)>(call, k)) bad = k;
    });
  }
  if (bad < 0) return std::nullopt;
  return index_at(call, bad, self);
}

std::optional<std::int64_t> scatter(const kernels::IndexCall& call, bool accumulate, const Tensor& self) {
  std::int64_t bad = -1;
  if (!self.storage().host_addressable()) bad = device::scatter(call, accumulate);
  else dispatch(call.dtype, [&](auto tag) { bad = kernels::scatter_in_order<decltype(tag)>(call, accumulate); });
  if (bad < 0) return std::nullopt;
  return index_at(call, bad, self);
}

Tensor nonzero(const Tensor& mask) {
  PARITY_INTERNAL_ASSERT(mask.dtype() == ScalarType::Bool && mask.device().type == DeviceType::CUDA,
                         "cuda::nonzero takes a bool cuda mask");
  const Tensor m = contiguous(mask);
  kernels::NonzeroCall call;
  call.mask = m.numel() == 0 ? nullptr : m.data<bool>();
  call.numel = m.numel();
  call.ndim = static_cast<int>(m.dim());
  std::copy(m.sizes().begin(), m.sizes().end(), call.sizes);
  const bool host = m.storage().host_addressable();
  std::vector<std::int64_t> counts;
  if (host) {
    for (std::int64_t b = 0; b < kernels::nonzero_chunks(call.numel); ++b)
      counts.push_back(kernels::nonzero_chunk_count(call, b));
  } else {
    counts = device::nonzero_counts(call);
  }
  std::vector<std::int64_t> firsts(counts.size());
  std::int64_t hits = 0;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    firsts[b] = hits;
    hits += counts[b];
  }
  Tensor out = Tensor::allocate_uninitialized(Layout::dense({hits, m.dim()}), ScalarType::Int64, mask.device());
  call.out = out.numel() == 0 ? nullptr : out.data<std::int64_t>();
  if (host) {
    for (std::size_t b = 0; b < firsts.size(); ++b)
      kernels::nonzero_chunk_write(call, static_cast<std::int64_t>(b), firsts[b]);
  } else if (hits > 0) {
    device::nonzero_write(call, firsts);
  }
  return out;
}

Tensor to_device(const Tensor& cpu, int device) {
  PARITY_CHECK(device == 0, ErrorKind::Device, "impl's CUDA code uses device 0 only");
  Tensor dense = clone(detach(cpu), MemoryFormat::Contiguous);
  Tensor out = Tensor::allocate_uninitialized(dense.layout(), dense.dtype(), Device{DeviceType::CUDA, 0});
  void* dst = out.storage().data();
  const void* src = dense.storage().data();
  if (out.storage().host_addressable()) std::memcpy(dst, src, dense.storage().nbytes());
  else device::upload(dst, src, dense.storage().nbytes());
  return out;
}

Tensor to_host(const Tensor& cuda) {
  Tensor out = Tensor::allocate(Layout{cuda.sizes(), cuda.strides(), cuda.offset()}, cuda.dtype());
  const std::size_t n = std::min(out.storage().nbytes(), cuda.storage().nbytes());
  if (cuda.storage().host_addressable()) std::memcpy(out.storage().data(), cuda.storage().data(), n);
  else device::download(out.storage().data(), cuda.storage().data(), n);
  return out;
}

void write_back(const Tensor& cuda, const Tensor& host) {
  const std::size_t n = std::min(host.storage().nbytes(), cuda.storage().nbytes());
  if (cuda.storage().host_addressable()) std::memcpy(cuda.storage().data(), host.storage().data(), n);
  else device::upload(cuda.storage().data(), host.storage().data(), n);
}

}  // namespace cuda
}  // namespace parity::impl
