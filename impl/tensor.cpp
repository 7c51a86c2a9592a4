#include "impl/tensor.h"

#include "impl/autograd/meta.h"
#include "impl/cpu/loops.h"
#include "impl/error.h"

namespace parity::impl {

TensorImpl::TensorImpl() = default;
TensorImpl::~TensorImpl() = default;

Tensor Tensor::allocate(const Layout& layout, ScalarType dtype, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(layout.storage_extent(), 0));
  Allocator& alloc = device.type == DeviceType::CPU ? cpu_allocator() : cuda_allocator();
  impl->storage = Storage(n * element_size(dtype), alloc);
  impl->layout = layout;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::over(const Storage& storage, const Layout& layout, ScalarType dtype, const VersionCounter& version) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = storage;
  impl->layout = layout;
  impl->dtype = dtype;
  impl->version = version;
  return Tensor(std::move(impl));
}

std::string Tensor::type_string() const { return std::string(legacy_type_name(dtype())) + " " + format_dims(sizes()); }

std::vector<double> Tensor::to_vector() const {
  check(device().type == DeviceType::CPU, ErrorKind::Device, "to_vector() needs a CPU tensor");
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
