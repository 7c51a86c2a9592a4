// Tensor: a handle to a TensorImpl (storage + layout + dtype + version counter + optional autograd state).
// Copying a Tensor copies the handle, as with at::Tensor.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/layout.h"
#include "impl/rc.h"
#include "impl/scalar_type.h"
#include "impl/storage.h"
#include "impl/version_counter.h"

namespace parity::impl {

namespace autograd {
struct AutogradMeta;
}

// c10's SizesAndStrides keeps a tensor's first kStrideSlots sizes and strides in place. A rank that shrinks in place
// (resize_ through an out=, squeeze_, set_data) leaves the strides past it in their slots, and LibTorch's
// gradient layout contract reads them (impl/autograd/functions.cpp): they decide whether a leaf takes its gradient
// as it is.
inline constexpr std::size_t kStrideSlots = 5;
using StrideSlots = std::array<std::int64_t, kStrideSlots>;
// A fresh tensor's slots past its rank: 0, but for slot 0 of a 0-dim one, the stride 1 SizesAndStrides starts with.
inline constexpr StrideSlots kFreshStrideSlots = {1, 0, 0, 0, 0};

struct TensorImpl {
  Storage storage;
  Layout layout;
  ScalarType dtype = ScalarType::Float32;
  VersionCounter version;
  std::unique_ptr<autograd::AutogradMeta> autograd;  // null until autograd state is needed
  // The stride slots past the rank; null: kFreshStrideSlots. Set once a rank shrinks in place, so most tensors
  // carry none.
  std::unique_ptr<StrideSlots> past_strides;
  // From its parts: no default to overwrite, as a default VersionCounter is a heap counter of its own (a detach
  // that made and dropped one spent a fifth of its time on it).
  TensorImpl(Storage storage, Layout layout, ScalarType dtype, VersionCounter version);
  ~TensorImpl();
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Rc<TensorImpl> impl) : impl_(std::move(impl)) {}
  // A fresh tensor on its own storage, sized exactly for `layout` (as empty_strided allocates).
  // Its bytes read as zero until written.
  static Tensor allocate(const Layout& layout, ScalarType dtype, Device device = {});
  // The same, for an output whose kernel writes every element before anything reads one (clone, contiguous, an
  // elementwise result): its bytes may be left from a freed storage, which saves zeroing a reused block. A layout
  // with holes (not non-overlapping and dense, or at an offset) leaves bytes no kernel writes: those storages are
  // zeroed all the same.
  static Tensor allocate_uninitialized(const Layout& layout, ScalarType dtype, Device device = {});
  // A tensor over an existing storage; version counter shared when given.
  static Tensor over(const Storage& storage, const Layout& layout, ScalarType dtype, const VersionCounter& version);
  // Another tensor over this one's storage, geometry, dtype and version counter (detach's): no check, as this
  // one's geometry was checked when it was made.
  Tensor alias() const;

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const Rc<TensorImpl>& shared() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

  const Layout& layout() const { return impl_->layout; }
  const Dims& sizes() const { return impl_->layout.sizes; }
  const Dims& strides() const { return impl_->layout.strides; }
  std::int64_t offset() const { return impl_->layout.offset; }
  std::int64_t dim() const { return impl_->layout.dim(); }
  std::int64_t numel() const { return impl_->layout.numel(); }
  ScalarType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage.device(); }
  const Storage& storage() const { return impl_->storage; }
  const VersionCounter& version_counter() const { return impl_->version; }
  std::uint32_t version() const { return impl_->version.current(); }
  void bump_version() const { impl_->version.bump(); }
  // resize_ / as_strided_ / squeeze_: this very tensor takes another geometry over its storage, which must hold
  // it (the caller grows the storage first). Its old strides stay in their slots (stride_slot).
  void restride(const Layout& layout) const;
  // What c10 reads at stride index i: the stride for i below the rank, else the slot's stale value (kStrideSlots);
  // nullopt past the slots, where c10 reads outside its array.
  std::optional<std::int64_t> stride_slot(std::size_t i) const;
  // set_data's shallow copy: the slots past the rank come from `from` as well.
  void copy_stride_slots(const Tensor& from) const;
  bool is_contiguous(MemoryFormat f = MemoryFormat::Contiguous) const { return layout().is_contiguous(f); }
  bool is_non_overlapping_and_dense() const { return layout().is_non_overlapping_and_dense(); }
  // Pointer to element 0 (offset applied).
  template <typename T>
  T* data() const {
    return static_cast<T*>(impl_->storage.data()) + impl_->layout.offset;
  }
  // LibTorch's Tensor::toString(), backend then scalar type ("CPUFloatType"), as its C++ error messages print
  // it (Python's error translation rewrites it to torch.FloatTensor; the oracle is the C++ API).
  std::string type_name() const;
  std::string type_string() const;  // "CPUFloatType [2, 3]", as the version-counter message prints a tensor

  // Elements in logical row-major order, converted to double (observation, tests, and the few formulas that read
  // values on the host); a device tensor's are copied to the host first.
  std::vector<double> to_vector() const;

 private:
  Rc<TensorImpl> impl_;
};

}  // namespace parity::impl
