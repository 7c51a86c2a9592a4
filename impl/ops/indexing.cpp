// Advanced indexing as ATen's TensorAdvancedIndexing does it for one index tensor on the leading dims:
// aten::index (x[idx], x[mask]) and aten::index_put_ (x[idx] = v, with or without accumulate). A bool mask becomes
// one int64 index per dim it covers (nonzero); self is restrided so that the indexed dims become the index's
// shape with stride 0; the index is reshaped to broadcast against it; TensorIterator lays out the result from all
// of them and the kernel walks the result adding index * stride per indexed dim.
#include <algorithm>
#include <limits>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/ops/node_builder.h"
#include "impl/version_gate.h"

namespace parity::impl {

using autograd::Derivative;
using autograd::Formula;
using autograd::TensorList;
using ops::make_node;

namespace {

// What make_info computes: the restrided self and the index tensors reshaped to broadcast against it.
struct AdvancedIndex {
  Tensor src;                  // self restrided: the indexed dims replaced by the index shape, stride 0
  std::vector<Tensor> indices;  // int64, one per indexed dim, reshaped to src's rank
  Dims indexed_sizes, indexed_strides;
};

bool is_mask(const Tensor& t) { return t.dtype() == ScalarType::Bool; }

bool on_cpu(const Tensor& t) { return t.device().type == DeviceType::CPU; }

// A CPU self indexed by a cuda index (or written from cuda values, which the checks then refuse) runs the CPU's
// loops on a host copy of the operand. A cuda self runs the device's kernels (impl/kernels/index.h).
Tensor on_host(const Tensor& t) { return on_cpu(t) ? t : cuda::to_host(t); }

// The index list has one entry (a mask counts once here).
void check_index_count(const Tensor& self) {
  PARITY_CHECK_AS(self.dim() >= 1, ErrorKind::IndexRange, IndexError,
               "too many indices for tensor of dimension " + std::to_string(self.dim()) + " (got 1)");
}

// ATen's TORCH_CHECK_INDEX: a dtype error, raised as IndexError. Indexing's checks all are (expandTensors,
// index_put's and the kernels' bounds checks).
void check_index_types(const Tensor& index) {
  if (follows(VersionGate::IndexAcceptsInt32))
    PARITY_CHECK_AS(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32 || is_mask(index),
                    ErrorKind::DType, IndexError, "tensors used as indices must be long, int, byte or bool tensors");
  else
    PARITY_CHECK_AS(index.dtype() == ScalarType::Int64 || is_mask(index), ErrorKind::DType, IndexError,
                    "tensors used as indices must be long, byte or bool tensors");
}

// A mask's nonzero positions as int64 (count, mask.dim()) in row-major order; column j indexes dim j.
Tensor nonzero(const Tensor& mask) {
  ops::require_cpu({&mask});  // on_host mirrored it
  const Tensor m = contiguous(mask);
  const bool* p = m.data<bool>();
  std::vector<std::int64_t> hits;
  const Dims& sizes = m.sizes();
  std::vector<std::int64_t> pos(sizes.size(), 0);
  for (std::int64_t i = 0; i < m.numel(); ++i) {
    if (p[i]) hits.insert(hits.end(), pos.begin(), pos.end());
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++pos[d] < sizes[d]) break;
      pos[d] = 0;
    }
  }
  const auto k = static_cast<std::int64_t>(sizes.size());
  Tensor out = Tensor::allocate(Layout::dense({k ? static_cast<std::int64_t>(hits.size()) / k : 0, k}), ScalarType::Int64);
  std::copy(hits.begin(), hits.end(), out.data<std::int64_t>());
  return out;
}

// A mask must match the dims it covers; reading a size past self's dims raises as self.size(d) does.
void check_mask_shape(const Tensor& self, const Tensor& mask) {
  for (std::int64_t j = 0; j < mask.dim(); ++j) {
    PARITY_CHECK_AS(j < self.dim(), ErrorKind::IndexRange, IndexError,
                 "Dimension out of range (expected to be in range of [" + std::to_string(-self.dim()) + ", " +
                     std::to_string(self.dim() - 1) + "], but got " + std::to_string(j) + ")");
    PARITY_CHECK_AS(mask.sizes()[j] == self.sizes()[j], ErrorKind::Shape, IndexError,
                 "The shape of the mask " + format_dims(mask.sizes()) + " at index " + std::to_string(j) +
                     " does not match the shape of the indexed tensor " + format_dims(self.sizes()) + " at index " +
                     std::to_string(j));
  }
}

// expandTensors: a mask must match the dims it covers and becomes one column of its nonzero per dim.
std::vector<Tensor> expand_index(const Tensor& self, const Tensor& index) {
  // The kernels read int64 positions: an int32 index holds the same ones.
  if (index.dtype() == ScalarType::Int32) return {to(index, ScalarType::Int64)};
  if (!is_mask(index)) return {index};
  check_mask_shape(self, index);
  const Tensor nz = nonzero(index);
  std::vector<Tensor> out;
  for (std::int64_t j = 0; j < index.dim(); ++j) out.push_back(select(nz, 1, j));
  return out;
}

// self restrided so that its first k dims become the indices' shape (stride 0), and the indices reshaped to
// broadcast against it; `indexed_sizes` and `indexed_strides` are what each index is checked against and
// multiplied by.
AdvancedIndex restride(const Tensor& self, std::vector<Tensor> indices, std::int64_t k, Dims indexed_sizes,
                       Dims indexed_strides) {
  AdvancedIndex info;
  Dims replacement = indices.empty() ? Dims{} : indices.front().sizes();
  const Dims consumed(self.sizes().begin(), self.sizes().begin() + k);
  PARITY_CHECK_AS(std::find(consumed.begin(), consumed.end(), 0) == consumed.end() ||
                      std::find(replacement.begin(), replacement.end(), 0) != replacement.end(),
                  ErrorKind::IndexRange, IndexError, "index is out of bounds for dimension with size 0");
  info.indexed_sizes = std::move(indexed_sizes);
  info.indexed_strides = std::move(indexed_strides);
  Dims shape = replacement, strides(replacement.size(), 0);
  shape.insert(shape.end(), self.sizes().begin() + k, self.sizes().end());
  strides.insert(strides.end(), self.strides().begin() + k, self.strides().end());
  info.src = Tensor::over(self.storage(), Layout{shape, strides, self.offset()}, self.dtype(), self.version_counter());
  const std::int64_t after = self.dim() - k;
  for (const Tensor& i : indices) {
    Dims s = i.sizes();
    s.insert(s.end(), static_cast<std::size_t>(after), 1);
    info.indices.push_back(reshape(i, s));
  }
  return info;
}

AdvancedIndex make_info(const Tensor& self, const Tensor& index) {
  check_index_count(self);
  check_index_types(index);
  std::vector<Tensor> indices = expand_index(self, index);
  const auto k = static_cast<std::int64_t>(indices.size());
  return restride(self, std::move(indices), k, Dims(self.sizes().begin(), self.sizes().begin() + k),
                  Dims(self.strides().begin(), self.strides().begin() + k));
}

// make_info for a cuda self: one int64 index on self's device whatever the index. A mask's true positions
// become their offsets in self (always in range: never checked, indexed size 0), so that a kernel takes one
// index operand whatever the mask's rank; a 0-dim mask replaces no dim (offset 0 everywhere), as expand_index's
// zero columns replace none.
AdvancedIndex make_device_info(const Tensor& self, const Tensor& index) {
  check_index_count(self);
  check_index_types(index);
  autograd::NoGradGuard integers_only;
  if (!is_mask(index))
    return restride(self, {to(to(index, ScalarType::Int64), self.device())}, 1, {self.sizes()[0]},
                    {self.strides()[0]});
  check_mask_shape(self, index);
  if (index.dim() == 0) return restride(self, {zeros({}, ScalarType::Int64, false, self.device())}, 0, {0}, {1});
  const Tensor nz = on_cpu(index) ? nonzero(index) : cuda::nonzero(index);
  Tensor offsets = zeros({nz.sizes()[0]}, ScalarType::Int64, false, nz.device());
  for (std::int64_t j = 0; j < index.dim(); ++j)
    offsets = add(offsets, mul(select(nz, 1, j), full({}, Scalar::of_int(self.strides()[j]), ScalarType::Int64)));
  return restride(self, {to(offsets, self.device())}, index.dim(), {0}, {1});
}

// TensorIterator's walk over src's shape: fastest the dim where `order_of`'s strides are smallest (the layout it
// gives the output from all operands). The first out-of-range index it meets is the one the error names, and an
// index_put_ that raises has written the elements before it.
std::vector<std::size_t> iteration_order(const Layout& order_of) {
  std::vector<std::size_t> dims(order_of.sizes.size());
  for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = dims.size() - 1 - d;
  // Size-1 dims do not move the walk: last, so that the order of the others is a strict one.
  auto key = [&](std::size_t d) {
    return order_of.sizes[d] == 1 ? std::numeric_limits<std::int64_t>::max() : order_of.strides[d];
  };
  std::stable_sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return dims;
}

// Walks src's shape in `order` (fastest dim first): for each element, where it lands in self's storage (relative
// to self's element 0) once every indexed dim's index is added, after checking the index against the dim's size,
// and the element's offset in each of `extra` (strides over src's shape). A mask gives as many index operands as
// it has dims, more than cpu::for_each_offset walks, so this is a plain odometer.
template <typename Visit>
void for_each_indexed(const AdvancedIndex& info, const std::vector<std::size_t>& order, const std::vector<Dims>& extra,
                      Visit visit) {
  const Dims& shape = info.src.sizes();
  for (auto n : shape)
    if (n == 0) return;
  std::vector<Dims> st = {info.src.strides()};
  std::vector<const std::int64_t*> idx;
  for (const Tensor& i : info.indices) {
    st.push_back(ops::broadcast_strides(i, shape));
    idx.push_back(i.data<std::int64_t>());
  }
  st.insert(st.end(), extra.begin(), extra.end());
  const std::size_t k = info.indices.size();
  std::vector<std::int64_t> pos(shape.size(), 0), off(st.size(), 0);
  for (;;) {
    std::int64_t at = off[0];
    for (std::size_t j = 0; j < k; ++j) {
      std::int64_t v = idx[j][off[1 + j]];
      const std::int64_t size = info.indexed_sizes[j];
      PARITY_CHECK_AS(v >= -size && v < size, ErrorKind::IndexRange, IndexError,
                   "index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(j) +
                       " with size " + std::to_string(size));
      if (v < 0) v += size;
      at += v * info.indexed_strides[j];
    }
    visit(at, off.data() + 1 + k);
    std::size_t step = 0;
    for (; step < order.size(); ++step) {
      const std::size_t d = order[step];
      for (std::size_t o = 0; o < st.size(); ++o) off[o] += st[o][d];
      if (++pos[d] < shape[d]) break;
      for (std::size_t o = 0; o < st.size(); ++o) off[o] -= st[o][d] * shape[d];
      pos[d] = 0;
    }
    if (step == order.size()) return;
  }
}

// The device's call over a device info: the walk in TensorIterator's order over the layout `order_of`, the other
// operand (gather's output, scatter's values) at `other_strides` over the result's shape.
kernels::IndexCall index_call(const AdvancedIndex& info, const Tensor& self, const Tensor& other,
                              const Dims& other_strides, const Layout& order_of) {
  PARITY_INTERNAL_ASSERT(info.indices.size() == 1, "a device indexing takes one index operand (make_device_info)");
  const Dims& shape = info.src.sizes();
  const Dims index_strides = ops::broadcast_strides(info.indices[0], shape);
  // The geometry's row-major order is the walk's: its last dim the fastest.
  const std::vector<std::size_t> order = iteration_order(order_of);
  std::vector<std::int64_t> sizes, st[3];
  for (std::size_t n = order.size(); n-- > 0;) {
    const std::size_t d = order[n];
    sizes.push_back(shape[d]);
    st[0].push_back(other_strides[d]);
    st[1].push_back(info.src.strides()[d]);
    st[2].push_back(index_strides[d]);
  }
  kernels::IndexCall c;
  c.dtype = self.dtype();
  const std::int64_t* strides[3] = {st[0].data(), st[1].data(), st[2].data()};
  PARITY_INTERNAL_ASSERT(kernels::make_geometry(static_cast<int>(sizes.size()), sizes.data(), 3, strides, c.geometry),
                         "more than " + std::to_string(kernels::kMaxDims) + " dims remain after coalescing");
  c.other = ops::element0(other);
  c.self = ops::element0(self);
  c.index = reinterpret_cast<const std::int64_t*>(ops::element0(info.indices[0]));
  c.size = info.indexed_sizes[0];
  c.stride = info.indexed_strides[0];
  return c;
}

[[noreturn]] void out_of_bounds(std::int64_t v, std::int64_t size) {
  fail(ErrorKind::IndexRange,
       "index " + std::to_string(v) + " is out of bounds for dimension 0 with size " + std::to_string(size),
       ErrorClass::IndexError);
}

Tensor index_on_device(const Tensor& self, const Tensor& index) {
  const AdvancedIndex info = make_device_info(self, index);
  const Tensor& idx = info.indices[0];
  Tensor out = Tensor::allocate(ops::elementwise_layout(info.src.sizes(), {&info.src.layout(), &idx.layout()}),
                                self.dtype(), self.device());
  if (auto bad = cuda::gather(index_call(info, self, out, out.strides(), out.layout()), self))
    out_of_bounds(*bad, info.indexed_sizes[0]);
  return out;
}

Tensor index_values(const Tensor& self, const Tensor& index) {
  // at::index's meta: the count, then an index on the CPU or on self's device.
  check_index_count(self);
  PARITY_CHECK(on_cpu(index) || index.device() == self.device(), ErrorKind::Device,
               "indices should be either on cpu or on the same device as the indexed tensor (" + self.device().str() +
                   ")");
  if (!on_cpu(self)) return index_on_device(self, index);
  const AdvancedIndex info = make_info(self, index);
  std::vector<const Layout*> inputs = {&info.src.layout()};
  for (const Tensor& i : info.indices) inputs.push_back(&i.layout());
  Tensor out = Tensor::allocate(ops::elementwise_layout(info.src.sizes(), inputs), self.dtype(), self.device());
  dispatch(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = self.data<T>();
    T* o = out.data<T>();
    for_each_indexed(info, iteration_order(out.layout()), {out.strides()},
                     [&](std::int64_t at, const std::int64_t* rest) { o[rest[0]] = in[at]; });
  });
  return out;
}

// at::assert_no_overlap: partial and full overlap both refused.
void check_no_overlap(const Tensor& self, const Tensor& other) {
  const ops::Overlap lap = ops::overlap_status(self, other);
  PARITY_CHECK(lap != ops::Overlap::Partial && lap != ops::Overlap::Full, ErrorKind::Overlap,
               "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
               "memory location. Please clone() the tensor before performing the operation.");
}

bool is_expandable_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const std::int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// The checks make_info and make_index_put_iterator run and the write, on operands that index_put_values brought
// to the host. `devices`: self and the values as they are, whose devices TensorIterator checks (after the shape
// and dtype, before the write); an index is moved to self's device first, so it never fails there. An index out
// of range raises from inside the loop, after the elements before it were written, as ATen's serial kernel does.
// `sorted`: accumulating on cuda, through index_put_with_sort_kernel. It expands the values to the indexing
// result's shape (2.x: with expand's own errors), and writes into a contiguous copy of a self that is not
// contiguous, which it then copy_s back: a self whose elements overlap is refused there, unchanged, once the
// copy has anything to write.
struct OnDevices {
  const Tensor& self;
  const Tensor& values;
  bool sorted = false;
};
// index_put's checks after make_info, in ATen's order, on `values` as the kernel reads them (the host copy of a
// CPU self's cuda values): nothing is written when one fails.
void check_index_put(const AdvancedIndex& info, const Tensor& values, const OnDevices& devices) {
  if (devices.sorted && follows(VersionGate::IndexPutSortExpandsValues))
    (void)geometry::expand(values.layout(), info.src.sizes(), devices.values.type_name());
  PARITY_CHECK(is_expandable_to(values.sizes(), info.src.sizes()), ErrorKind::Shape,
               "shape mismatch: value tensor of shape " + format_dims(values.sizes()) +
                   " cannot be broadcast to indexing result of shape " + format_dims(info.src.sizes()));
  PARITY_CHECK(values.dtype() == info.src.dtype(), ErrorKind::DType,
               "Index put requires the source and destination dtypes match, got " + std::string(type_name(info.src.dtype())) +
                   " for the destination and " + std::string(type_name(values.dtype())) + " for the source.");
  ops::common_device(&devices.self, {&devices.values}, /*allow_cpu_scalars=*/false);
  if (devices.sorted && info.src.numel() > 0) ops::check_no_overlap(devices.self, {});
}

void index_put_on_host(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate,
                       const OnDevices& devices) {
  ops::require_cpu({&self, &index, &values});
  const AdvancedIndex info = make_info(self, index);
  check_index_put(info, values, devices);
  std::vector<const Layout*> operands = {&info.src.layout(), &values.layout()};
  for (const Tensor& i : info.indices) operands.push_back(&i.layout());
  const auto order = iteration_order(ops::elementwise_layout(info.src.sizes(), operands));
  dispatch(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = self.data<T>();
    const T* in = values.data<T>();
    for_each_indexed(info, order, {ops::broadcast_strides(values, info.src.sizes())},
                     [&](std::int64_t at, const std::int64_t* rest) {
                       // The kernels' add: bool is or, integers wrap (no signed overflow), 16-bit floats round once.
                       out[at] = accumulate ? kernels::BinaryFn<T, kernels::BinaryOp::Add>{}(out[at], in[rest[0]])
                                            : in[rest[0]];
                     });
  });
}

// _index_put_impl_ below autograd: ATen's checks in its order, then the write.
void index_put_values(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate) {
  check_index_count(self);
  // One mask on self's device and one value on the CPU (canDispatchToMaskedFill): ATen fills through
  // masked_fill_, which converts the value, skips the dtype check below, and runs on self's device.
  if (!accumulate && is_mask(index) && values.numel() == 1 && on_cpu(values) && index.device() == self.device()) {
    check_mask_shape(self, index);
    Tensor mask = index;
    for (std::int64_t d = index.dim(); d < self.dim(); ++d) mask = unsqueeze(mask, -1);
    ops::masked_fill_checked(self, mask, values.to_vector().front());
    return;
  }
  // A zero-dim value on another device joins self's; then the overlaps, checked on the tensors themselves.
  Tensor value = values;
  if (value.device() != self.device() && value.dim() == 0) {
    autograd::NoGradGuard below_autograd;
    value = to(values, self.device());
  }
  check_no_overlap(self, values);
  check_no_overlap(self, index);
  // Accumulating on cuda goes through index_put_with_sort_stub, which checks the values' device itself.
  if (!on_cpu(self) && accumulate)
    PARITY_CHECK(value.device() == self.device(), ErrorKind::Device,
                 "expected device " + self.device().str() + " but got device " + value.device().str() +
                     " for value tensor");
  const OnDevices devices{self, value, !on_cpu(self) && accumulate};
  if (on_cpu(self)) return index_put_on_host(self, on_host(index), on_host(value), accumulate, devices);
  const AdvancedIndex info = make_device_info(self, index);
  check_index_put(info, value, devices);  // value is on self's device past it
  const Dims value_strides = ops::broadcast_strides(value, info.src.sizes());
  std::vector<const Layout*> operands = {&info.src.layout(), &value.layout(), &info.indices[0].layout()};
  const Layout order_of = ops::elementwise_layout(info.src.sizes(), operands);
  // The elements before an out-of-range index are written, as the serial walk writes them.
  if (auto bad = cuda::scatter(index_call(info, self, value, value_strides, order_of), accumulate, self))
    out_of_bounds(*bad, info.indexed_sizes[0]);
}

Tensor index_put(const Tensor& self, const Tensor& indices, const Tensor& values, bool accumulate);

// The node of index_put_, index_put and at::_index_put_impl_ (which index's backward calls), told apart by its
// name. It saves the index and values' shape and dtype (not values itself: writing it later is fine). Its
// formulas, as derivatives.yaml writes them and in the alphabetical order of the inputs (self, values): self's
// gradient is grad, or grad.index_put(indices, zeros_like(values)); values' is grad.index(indices).
Rc<Formula> index_put_node(Derivative d, const Tensor& self, const Tensor& indices,
                                        const Tensor& values, bool accumulate) {
  auto node = make_node(d, {&self, &values},
                        [accumulate, vsizes = values.sizes(), vtype = values.dtype()](const Tensor& g,
                                                                                      const TensorList& s,
                                                                                      const Formula& n) {
                          TensorList out(2);
                          if (n.task_should_compute_output(0))
                            out[0] = accumulate ? g : index_put(g, s[0], zeros(vsizes, vtype, false, g.device()), false);
                          if (n.task_should_compute_output(1)) out[1] = index(g, s[0]);
                          return out;
                        });
  node->save("indices", indices);
  return node;
}

// index_put_ and at::_index_put_impl_: in place, through the dispatcher (the version moves).
Tensor index_put_with_node(const Tensor& self, const Tensor& indices, const Tensor& values, bool accumulate,
                           Derivative d) {
  const bool rg = autograd::compute_requires_grad({&self, &values});
  autograd::check_inplace(self, rg);
  Rc<Formula> node;
  if (rg) node = index_put_node(d, self, indices, values, accumulate);
  index_put_values(self, indices, values, accumulate);
  self.bump_version();
  if (node) autograd::rebase_history(self, node);
  return self;
}

// aten::index_put, out of place: an op with a node of its own, whose kernel (a clone written in place) runs below
// the ADInplaceOrView key, so the result is at version 0. A LibTorch 1.13 probe shows it: the gradient
// IndexPutBackward0 gives self, grad.index_put(indices, zeros_like(values)), is at version 0.
Tensor index_put(const Tensor& self, const Tensor& indices, const Tensor& values, bool accumulate) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&self, &values}))
    node = index_put_node(Derivative::IndexPutBackward0, self, indices, values, accumulate);
  Tensor out;
  {
    autograd::NoGradGuard below_autograd;
    out = clone(self);
  }
  index_put_values(out, indices, values, accumulate);
  if (node) autograd::set_history(out, node);
  return out;
}

}  // namespace

// IndexBackward0 saves the index (its version is checked at backward) and self's sizes: the gradient is
// index_backward's zeros.index_put_(indices, grad, accumulate=True) through at::_index_put_impl_, so it is at
// version 1 and, under create_graph, an output of IndexPutImplBackward0.
Tensor index(const Tensor& self, const Tensor& index) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&self})) {
    node = make_node(Derivative::IndexBackward0, {&self}, [sizes = self.sizes()](const Tensor& g, const TensorList& s, const Formula&) {
      return TensorList{index_put_with_node(zeros(sizes, g.dtype(), false, g.device()), s[0], g, true, Derivative::IndexPutImplBackward0)};
    });
    node->save("indices", index);
  }
  Tensor out = index_values(self, index);
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor index_put_(const Tensor& self, const Tensor& index, const Tensor& values, bool accumulate) {
  return index_put_with_node(self, index, values, accumulate, Derivative::IndexPutBackward0);
}

}  // namespace parity::impl
