#include "impl/tensor.h"

#include <algorithm>

#include "impl/autograd/meta.h"
#include "impl/cpu/loops.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/kernels/geometry.h"

namespace parity::impl {

TensorImpl::TensorImpl(Storage storage, Layout layout, ScalarType dtype, VersionCounter version)
    : storage(std::move(storage)), layout(std::move(layout)), dtype(dtype), version(std::move(version)) {}
TensorImpl::~TensorImpl() = default;

namespace {
// Every kernel walks at most kernels::kMaxDims (64) dims and offsets must fit in int64: refuse layouts that do not.
void check_layout_fits(const Layout& layout, ScalarType dtype) {
  PARITY_CHECK(layout.dim() <= kernels::kMaxDims, ErrorKind::Argument, "impl supports tensors of at most 64 dims");
  for (auto size : layout.sizes)
    PARITY_CHECK(size >= 0, ErrorKind::Argument,
          "Trying to create tensor with negative dimension " + std::to_string(size) + ": " + format_dims(layout.sizes));
  std::int64_t reach = 0;
  bool overflow = false;
  for (std::size_t i = 0; i < layout.sizes.size(); ++i) {
    std::int64_t step = 0;
    if (layout.sizes[i] > 0) overflow |= __builtin_mul_overflow(layout.sizes[i] - 1, layout.strides[i], &step);
    overflow |= __builtin_add_overflow(reach, step, &reach);
  }
  std::int64_t bytes = 0;
  overflow |= __builtin_add_overflow(reach, layout.offset + 1, &reach) ||
              __builtin_mul_overflow(reach, static_cast<std::int64_t>(element_size(dtype)), &bytes);
  PARITY_CHECK(!overflow, ErrorKind::Argument, "Storage size calculation overflowed with sizes=" + format_dims(layout.sizes) +
                                            " and strides=" + format_dims(layout.strides));
}
}  // namespace

namespace {
Tensor allocate_filled(const Layout& layout, ScalarType dtype, Device device, Fill fill) {
  check_layout_fits(layout, dtype);
  std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(layout.storage_extent(), 0));
  Allocator& alloc = device.type == DeviceType::CPU ? cpu_allocator() : cuda_allocator();
  return Tensor(make_rc<TensorImpl>(Storage(n * element_size(dtype), alloc, fill), layout, dtype, VersionCounter()));
}
}  // namespace

Tensor Tensor::allocate(const Layout& layout, ScalarType dtype, Device device) {
  return allocate_filled(layout, dtype, device, Fill::Zeros);
}

Tensor Tensor::allocate_uninitialized(const Layout& layout, ScalarType dtype, Device device) {
  const bool covers_storage = layout.offset == 0 && layout.is_non_overlapping_and_dense();
  return allocate_filled(layout, dtype, device, covers_storage ? Fill::Unwritten : Fill::Zeros);
}

Tensor Tensor::over(const Storage& storage, const Layout& layout, ScalarType dtype, const VersionCounter& version) {
  check_layout_fits(layout, dtype);
  return Tensor(make_rc<TensorImpl>(storage, layout, dtype, version));
}

Tensor Tensor::alias() const {
  Tensor t(make_rc<TensorImpl>(impl_->storage, impl_->layout, impl_->dtype, impl_->version));
  if (impl_->past_strides) t.copy_stride_slots(*this);  // shallow_copy_and_detach copies SizesAndStrides whole
  return t;
}

std::optional<std::int64_t> Tensor::stride_slot(std::size_t i) const {
  if (i < strides().size()) return strides()[i];
  if (i >= kStrideSlots) return std::nullopt;
  return (impl_->past_strides ? *impl_->past_strides : kFreshStrideSlots)[i];
}

void Tensor::copy_stride_slots(const Tensor& from) const {
  impl_->past_strides = from.impl_->past_strides ? std::make_unique<StrideSlots>(*from.impl_->past_strides) : nullptr;
}

void Tensor::restride(const Layout& layout) const {
  check_layout_fits(layout, dtype());
  PARITY_INTERNAL_ASSERT(static_cast<std::size_t>(std::max<std::int64_t>(layout.storage_extent(), 0)) * element_size(dtype()) <=
                             storage().nbytes(),
                         "restride past the storage's end");
  const Dims& old = strides();
  if (layout.strides.size() < old.size() || impl_->past_strides) {
    if (!impl_->past_strides) impl_->past_strides = std::make_unique<StrideSlots>(kFreshStrideSlots);
    for (std::size_t i = 0; i < std::min(old.size(), kStrideSlots); ++i) (*impl_->past_strides)[i] = old[i];
  }
  impl_->layout = layout;
}

std::string Tensor::type_name() const {
  return std::string(device().type == DeviceType::CUDA ? "CUDA" : "CPU") + std::string(impl::type_name(dtype())) + "Type";
}

std::string Tensor::type_string() const { return type_name() + " " + format_dims(sizes()); }

std::vector<double> Tensor::to_vector() const {
  if (device().type != DeviceType::CPU) return cuda::to_host(*this).to_vector();
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(numel()));
  dispatch(dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* base = data<T>();
    cpu::for_each_offset(sizes(), {&strides()}, [&](const std::int64_t* off) {
      out.push_back(static_cast<double>(base[off[0]]));
    });
  });
  return out;
}

}  // namespace parity::impl
