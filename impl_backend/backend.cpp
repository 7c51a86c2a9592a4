#include "impl_backend/backend.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/cuda/cuda_runtime.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl_backend/combination_faults.h"
#include "impl_backend/planted_faults.h"
#include "program/content.h"
#include "program/internal_assert.h"

namespace parity::impl_backend {

namespace {

namespace pg = parity::program;
namespace jd = parity::judge;
// The adapter's whole job is calling impl: its types and ops unqualified, program's and the judge's behind pg::
// and jd::.
using namespace parity::impl;

// Set by a planted BreaksDevice fault: this process's CUDA context counts as broken from then on.
bool g_device_broken_by_plant = false;

ScalarType to_impl(pg::DType d) {
  switch (d) {
    case pg::DType::Float32: return ScalarType::Float32;
    case pg::DType::Float64: return ScalarType::Float64;
    case pg::DType::Int64: return ScalarType::Int64;
    case pg::DType::Int32: return ScalarType::Int32;
    case pg::DType::Float16: return ScalarType::Float16;
    case pg::DType::BFloat16: return ScalarType::BFloat16;
    case pg::DType::Bool: return ScalarType::Bool;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

pg::DType to_program(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return pg::DType::Float32;
    case ScalarType::Float64: return pg::DType::Float64;
    case ScalarType::Int64: return pg::DType::Int64;
    case ScalarType::Int32: return pg::DType::Int32;
    case ScalarType::Float16: return pg::DType::Float16;
    case ScalarType::BFloat16: return pg::DType::BFloat16;
    case ScalarType::Bool: return pg::DType::Bool;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

MemoryFormat to_impl(pg::MemoryFormat m) {
  switch (m) {
    case pg::MemoryFormat::Contiguous: return MemoryFormat::Contiguous;
    case pg::MemoryFormat::ChannelsLast: return MemoryFormat::ChannelsLast;
    case pg::MemoryFormat::ChannelsLast3d: return MemoryFormat::ChannelsLast3d;
    case pg::MemoryFormat::Preserve: return MemoryFormat::Preserve;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

// A program's cuda is the current CUDA device, as PyTorch's "cuda" (ensure_has_index) is.
Device to_impl(pg::Device d) {
  switch (d) {
    case pg::Device::CPU: return Device{DeviceType::CPU, 0};
    case pg::Device::CUDA: return Device{DeviceType::CUDA, 0};
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

Scalar to_impl(const pg::Scalar& s) {
  switch (s.kind) {
    case pg::Scalar::Kind::Int: return {Scalar::Kind::Int, s.value};
    case pg::Scalar::Kind::Float: return {Scalar::Kind::Float, s.value};
    case pg::Scalar::Kind::Bool: return {Scalar::Kind::Bool, s.value};
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

std::optional<Scalar> to_impl(const std::optional<pg::Scalar>& s) {
  if (!s) return std::nullopt;
  return to_impl(*s);
}

std::vector<Scalar> to_impl(const std::vector<pg::Scalar>& elements) {
  std::vector<Scalar> out;
  out.reserve(elements.size());
  for (const auto& e : elements) out.push_back(to_impl(e));
  return out;
}

jd::ErrorCategory to_program(ErrorKind k) {
  switch (k) {
    case ErrorKind::VersionMismatch: return jd::ErrorCategory::VersionMismatch;
    case ErrorKind::GraphFreed: return jd::ErrorCategory::GraphFreed;
    case ErrorKind::LeafInPlace: return jd::ErrorCategory::LeafInPlace;
    case ErrorKind::ViewInPlace: return jd::ErrorCategory::ViewInPlace;
    case ErrorKind::NoGradFn: return jd::ErrorCategory::NoGradFn;
    case ErrorKind::NonScalarBackward: return jd::ErrorCategory::NonScalarBackward;
    case ErrorKind::RequiresGradFlag: return jd::ErrorCategory::RequiresGradFlag;
    case ErrorKind::RetainGrad: return jd::ErrorCategory::RetainGrad;
    case ErrorKind::DetachView: return jd::ErrorCategory::DetachView;
    case ErrorKind::DeepcopyNonLeaf: return jd::ErrorCategory::DeepcopyNonLeaf;
    case ErrorKind::OutRequiresGrad: return jd::ErrorCategory::OutRequiresGrad;
    case ErrorKind::Shape: return jd::ErrorCategory::Shape;
    case ErrorKind::ViewStride: return jd::ErrorCategory::ViewStride;
    case ErrorKind::IndexRange: return jd::ErrorCategory::IndexRange;
    case ErrorKind::DType: return jd::ErrorCategory::DType;
    case ErrorKind::MemoryFormat: return jd::ErrorCategory::MemoryFormat;
    case ErrorKind::Overlap: return jd::ErrorCategory::Overlap;
    case ErrorKind::StorageBounds: return jd::ErrorCategory::StorageBounds;
    case ErrorKind::Argument: return jd::ErrorCategory::Argument;
    case ErrorKind::Device: return jd::ErrorCategory::Device;
    case ErrorKind::InternalAssert: return jd::ErrorCategory::InternalAssert;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

jd::ExceptionType to_program(ErrorClass c) {
  switch (c) {
    case ErrorClass::Error: return jd::ExceptionType::Error;
    case ErrorClass::IndexError: return jd::ExceptionType::IndexError;
    case ErrorClass::ValueError: return jd::ExceptionType::ValueError;
    case ErrorClass::TypeError: return jd::ExceptionType::TypeError;
    case ErrorClass::NotImplementedError: return jd::ExceptionType::NotImplementedError;
    case ErrorClass::RuntimeError: return jd::ExceptionType::RuntimeError;
    case ErrorClass::LogicError: return jd::ExceptionType::LogicError;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

// The impl side of a campaign, or the impl-cpu oracle (make_impl_cpu_oracle).
enum class Role { Impl, CpuOracle };

class ImplSession final : public jd::Session {
 public:
  ImplSession(TorchVersion follows, Role role) : follows_(follows), role_(role) {
    if (role == Role::CpuOracle) host_backed_.emplace();
  }
  // impl holds autograd state as LibTorch does, so the same cycles form (a node saving a tensor whose grad_fn it
  // becomes, x.mul_(x); two tensors set as each other's gradient) and outlived the session, in a persistent worker
  // for good (LeakSanitizer's reports in the asan-ubsan build). It lets go as the oracle's session does: every
  // gradient dropped, every node reachable from what the session holds releasing its saved tensors. (impl's
  // AccumulateGrad holds its leaf weakly, so create_graph makes no cycle here as it does in LibTorch.)
  ~ImplSession() override {
    std::vector<Tensor> tensors;
    for (const auto& v : values_)
      if (v) tensors.push_back(*v);
    for (const auto& [key, g] : kept_grads_) tensors.push_back(g);
    for (const auto& [id, memo] : memos_) {
      for (const auto& [key, t] : memo.tensors) tensors.push_back(t);
      for (const auto& [key, t] : memo.storages) tensors.push_back(t);
    }
    std::set<const void*> seen;
    std::vector<impl::Rc<autograd::Node>> nodes;
    while (!tensors.empty()) {
      const Tensor t = std::move(tensors.back());
      tensors.pop_back();
      if (!t.defined() || !seen.insert(t.impl()).second) continue;
      autograd::AutogradMeta* m = autograd::meta(t);
      if (!m) continue;
      for (const auto& fn : {m->grad_fn, m->retain_hook_node})
        if (fn) nodes.push_back(fn);
      if (m->base) tensors.push_back(*m->base);
      if (m->grad.defined()) {
        tensors.push_back(m->grad);
        m->grad = Tensor();
      }
    }
    std::set<const autograd::Node*> released;
    while (!nodes.empty()) {
      const impl::Rc<autograd::Node> fn = std::move(nodes.back());
      nodes.pop_back();
      if (!released.insert(fn.get()).second) continue;
      fn->release_variables();
      for (const auto& edge : fn->next_edges())
        if (edge.fn) nodes.push_back(edge.fn);
    }
  }

  void execute(const pg::Step& step, int index) override {
    if (values_.size() <= static_cast<std::size_t>(index)) values_.resize(static_cast<std::size_t>(index) + 1);
    autograd::GradModeGuard mode(step.grad_enabled);
    const PlantedFault* fault = faults_ ? planted_fault_for(*faults_, step.op) : nullptr;
    if (fault && is_process_fault(fault->kind)) misbehave(*fault);
    const bool combination = combination_holds(fault, step);
    const auto memo_link = fault && fault->kind == PlantedFault::Kind::GradMemo
                               ? CombinationFaults::memo_link(in(step, 0), memos_[step.attrs.memo], values_)
                               : CombinationFaults::MemoLink::None;
    if (fault && fault->kind == PlantedFault::Kind::Error)
      throw jd::StepError(jd::ErrorCategory::Argument,
                          "planted fault (" + fault->text() + "): impl refuses this op on purpose, as " +
                              std::string(kPlantVariable) + " asks");
    try {
      values_[index] = run(step);
    } catch (const Error& e) {
      if (fault && fault->kind == PlantedFault::Kind::Message)
        throw jd::StepError(to_program(e.kind()), std::string(e.what()) + " (reworded by planted fault " + fault->text() + ")",
                            to_program(e.error_class()));
      throw jd::StepError(to_program(e.kind()), e.what(), to_program(e.error_class()));
    }
    if (fault && fault->kind == PlantedFault::Kind::Values && values_[index]) plant_wrong_value(*values_[index]);
    if (fault && fault->kind == PlantedFault::Kind::Flaky && values_[index]) {
      if (!flaky_this_run_) flaky_this_run_ = flaky_turn();  // one turn per evaluation, at the op's first run
      if (*flaky_this_run_) plant_wrong_value(*values_[index]);
    }
    if (fault && fault->kind == PlantedFault::Kind::WritesInput) plant_wrong_value(in(step, 0));
    if (fault && fault->kind == PlantedFault::Kind::BreaksDevice) g_device_broken_by_plant = true;
    if (fault && fault->kind == PlantedFault::Kind::Fresh && values_[index]) {
      const Tensor& self = *values_[index];
      values_[index] = Tensor::over(self.storage(), self.layout(), self.dtype(), self.version_counter());
    }
    if (combination && values_[index]) CombinationFaults::corrupt(*values_[index]);
    if (memo_link != CombinationFaults::MemoLink::None && values_[index])
      values_[index] = CombinationFaults::unlink(*values_[index], memo_link);
    if (fault && fault->kind == PlantedFault::Kind::StaleRetainedView) combination_.retained(in(step, 0));
    if (faults_ && pg::spec(step.op).runs_backward) combination_.after_backward();
  }

  bool has_value(int id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < values_.size() && values_[id].has_value();
  }

  jd::TensorObs observe(int id, bool with_values, bool with_grad) override {
    const Tensor& t = *values_[id];
    jd::TensorObs o;
    o.sizes = t.sizes();
    o.strides = t.strides();
    o.offset = t.offset();
    o.dtype = to_program(t.dtype());
    o.device = t.device().str();
    o.requires_grad = autograd::requires_grad(t);
    // Reading grad_fn regenerates a view's history and can raise, as it does in PyTorch.
    o.is_leaf = autograd::is_leaf(t);
    o.retains_grad = autograd::retains_grad(t);
    try {
      auto fn = autograd::grad_fn(t);
      o.grad_fn = fn ? fn->name() : "";
    } catch (const Error& e) {
      o.grad_fn = jd::raised_marker(to_program(e.kind()));
    }
    o.version = t.version();
    o.contiguous = t.is_contiguous();
    o.channels_last = t.is_contiguous(MemoryFormat::ChannelsLast);
    o.channels_last_3d = t.is_contiguous(MemoryFormat::ChannelsLast3d);
    o.non_overlapping_dense = t.is_non_overlapping_and_dense();
    if (with_values) o.values = t.to_vector();
    if (with_grad) {
      Tensor g = autograd::grad(t);
      if (g.defined()) {
        o.grad = jd::GradObs{g.sizes(), g.strides(), to_program(g.dtype()), g.to_vector()};
        o.grad->version = g.version();
      }
    }
    return o;
  }

  std::vector<double> values(int id) const override { return values_[id]->to_vector(); }
  const void* storage_key(int id) const override { return values_[id]->storage().key(); }
  const void* tensor_key(int id) const override { return values_[id]->impl(); }
  const void* grad_storage_key(int id) const override {
    Tensor g = autograd::grad(*values_[id]);
    return g.defined() ? g.storage().key() : nullptr;
  }
  const void* grad_tensor_key(int id) override {
    Tensor g = autograd::grad(*values_[id]);
    if (!g.defined()) return nullptr;
    kept_grads_.emplace(g.impl(), g);
    return g.impl();
  }
  const void* base_key(int id) const override {
    const auto* m = autograd::meta(*values_[id]);
    return m && m->base ? m->base->impl() : nullptr;
  }

 private:
  const Tensor& in(const pg::Step& s, std::size_t i) const { return *values_[s.inputs[i]]; }

  static const PlantedFault* planted_fault_for(const std::vector<PlantedFault>& faults, pg::OpId op) {
    for (const auto& f : faults)
      if (f.op == op) return &f;
    return nullptr;
  }

  // Judged on the operands before the step runs: a view its own write has just bumped was not written before.
  bool combination_holds(const PlantedFault* fault, const pg::Step& step) const {
    if (!fault || !is_combination_fault(fault->kind) || fault->kind == PlantedFault::Kind::StaleRetainedView ||
        fault->kind == PlantedFault::Kind::GradMemo)
      return false;
    std::vector<const Tensor*> operands;
    for (std::size_t k = 0; k < step.inputs.size(); ++k) operands.push_back(&in(step, k));
    return CombinationFaults::holds(*fault, step, operands);
  }

  // Writes straight to memory, bumping no version: the bug is in the op's arithmetic, nowhere else.
  static void plant_wrong_value(const Tensor& t) {
    if (t.numel() == 0 || t.device().type != DeviceType::CPU) return;
    if (t.dtype() == ScalarType::Float32) t.data<float>()[0] += 1.0f;
    else if (t.dtype() == ScalarType::Float64) t.data<double>()[0] += 1.0;
  }

  // A _like factory's result, made on its operand's device (device=None), moved where device= asks.
  static Tensor like_on(const Tensor& t, std::optional<pg::Device> device) {
    return device ? to(t, to_impl(*device)) : t;
  }
  static std::optional<Device> like_device(std::optional<pg::Device> device) {
    if (!device) return std::nullopt;
    return to_impl(*device);
  }

  std::optional<Tensor> run(const pg::Step& s) {
    const auto& a = s.attrs;
    using pg::OpId;
    switch (s.op) {
      case OpId::Rand: {
        std::int64_t n = pg::storage_extent(a.sizes, a.strides, a.offset);
        Tensor storage = from_values(pg::seeded_content(a.seed, n, a.dtype), to_impl(a.dtype));
        if (a.device != pg::Device::CPU) storage = to(storage, to_impl(a.device));
        Tensor t = detach(as_strided(storage, a.sizes, a.strides, a.offset));
        return requires_grad_(t, a.requires_grad);
      }
      case OpId::Zeros:
        return zeros(a.sizes, to_impl(a.dtype), a.requires_grad, to_impl(a.device));
      case OpId::Ones:
        return ones(a.sizes, to_impl(a.dtype), a.requires_grad, to_impl(a.device));
      case OpId::Full: return full(a.sizes, to_impl(a.scalar), to_impl(a.dtype), a.requires_grad, to_impl(a.device));
      case OpId::Tensor:
        return literal_tensor(to_impl(a.elements), a.sizes, to_impl(a.dtype), a.requires_grad, to_impl(a.device));
      case OpId::Arange: return arange(a.end, to_impl(a.dtype), to_impl(a.device));
      case OpId::Empty: return empty(a.sizes, to_impl(a.dtype), MemoryFormat::Contiguous, to_impl(a.device));
      case OpId::EmptyMemoryFormat:
        return empty(a.sizes, to_impl(a.dtype), to_impl(a.memory_format), to_impl(a.device));
      case OpId::RandLike: return rand_like(in(s, 0), to_impl(a.memory_format), like_device(a.like_device));
      case OpId::RandnLike: return randn_like(in(s, 0), to_impl(a.memory_format), like_device(a.like_device));
      case OpId::RandintLike:
        return randint_like(in(s, 0), a.high, to_impl(a.memory_format), like_device(a.like_device));
      case OpId::EmptyLike: return like_on(empty_like(in(s, 0), to_impl(a.memory_format)), a.like_device);
      case OpId::ZerosLike: return like_on(zeros_like(in(s, 0), to_impl(a.memory_format)), a.like_device);
      case OpId::Clone: return clone(in(s, 0), to_impl(a.memory_format));
      case OpId::Contiguous: return contiguous(in(s, 0), to_impl(a.memory_format));
      case OpId::Detach: return detach(in(s, 0));
      case OpId::Detach_: return detach_(in(s, 0));
      case OpId::Copy_: return copy_(in(s, 0), in(s, 1));
      case OpId::Data: return variable_data(in(s, 0));
      case OpId::To: return to(in(s, 0), to_impl(a.dtype), a.copy);
      case OpId::ToDevice: return to(in(s, 0), to_impl(a.device), a.copy);
      case OpId::NewTensor: return new_tensor(in(s, 0));
      case OpId::Deepcopy: return deepcopy(in(s, 0), memos_[a.memo]);
      case OpId::View: return view(in(s, 0), a.sizes);
      case OpId::Reshape: return reshape(in(s, 0), a.sizes);
      case OpId::Transpose: return transpose(in(s, 0), a.dim, a.dim1);
      case OpId::Permute: return permute(in(s, 0), a.dims);
      case OpId::Slice: return slice(in(s, 0), a.dim, a.start, a.end, a.step);
      case OpId::Select: return select(in(s, 0), a.dim, a.index);
      case OpId::Narrow: return narrow(in(s, 0), a.dim, a.start, a.length);
      case OpId::Expand: return expand(in(s, 0), a.sizes);
      case OpId::Squeeze: return squeeze(in(s, 0));
      case OpId::SqueezeDim: return squeeze(in(s, 0), a.dim);
      case OpId::Unsqueeze: return unsqueeze(in(s, 0), a.dim);
      case OpId::AsStrided: return as_strided(in(s, 0), a.sizes, a.strides, a.offset);
      case OpId::Diagonal: return diagonal(in(s, 0), a.offset, a.dim, a.dim1);
      case OpId::T: return t(in(s, 0));
      case OpId::Unfold: return unfold(in(s, 0), a.dim, a.size, a.step);
      case OpId::Unbind: return jd::pick_output(unbind(in(s, 0), a.dim), a.index);
      case OpId::Split: return jd::pick_output(split(in(s, 0), a.size, a.dim), a.index);
      case OpId::Chunk: return jd::pick_output(chunk(in(s, 0), a.chunks, a.dim), a.index);
      case OpId::Add: return add(in(s, 0), in(s, 1));
      case OpId::Sub: return sub(in(s, 0), in(s, 1));
      case OpId::Mul: return mul(in(s, 0), in(s, 1));
      case OpId::Div: return div(in(s, 0), in(s, 1));
      case OpId::AddScalar: return add(in(s, 0), to_impl(a.scalar));
      case OpId::SubScalar: return sub(in(s, 0), to_impl(a.scalar));
      case OpId::MulScalar: return mul(in(s, 0), to_impl(a.scalar));
      case OpId::DivScalar: return div(in(s, 0), to_impl(a.scalar));
      case OpId::Pow: return pow(in(s, 0), to_impl(a.scalar));
      case OpId::Clamp: return clamp(in(s, 0), to_impl(a.min), to_impl(a.max));
      case OpId::Mm: return mm(in(s, 0), in(s, 1));
      case OpId::Matmul: return matmul(in(s, 0), in(s, 1));
      case OpId::Sum: return sum(in(s, 0));
      case OpId::SumDims: return sum(in(s, 0), a.dims, a.keepdim);
      case OpId::Mean: return mean(in(s, 0));
      case OpId::MeanDims: return mean(in(s, 0), a.dims, a.keepdim);
      case OpId::Add_: return add_(in(s, 0), in(s, 1));
      case OpId::Sub_: return sub_(in(s, 0), in(s, 1));
      case OpId::Mul_: return mul_(in(s, 0), in(s, 1));
      case OpId::Div_: return div_(in(s, 0), in(s, 1));
      case OpId::AddOut: return add_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::SubOut: return sub_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::MulOut: return mul_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::DivOut: return div_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::EqOut: return eq_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::NeOut: return ne_out(in(s, 0), in(s, 1), in(s, 2));
      case OpId::AddScalar_: return add_(in(s, 0), to_impl(a.scalar));
      case OpId::SubScalar_: return sub_(in(s, 0), to_impl(a.scalar));
      case OpId::MulScalar_: return mul_(in(s, 0), to_impl(a.scalar));
      case OpId::DivScalar_: return div_(in(s, 0), to_impl(a.scalar));
      case OpId::Zero_: return zero_(in(s, 0));
      case OpId::Fill_: return fill_(in(s, 0), to_impl(a.scalar));
      case OpId::Clamp_: return clamp_(in(s, 0), to_impl(a.min), to_impl(a.max));
      case OpId::Backward: backward(in(s, 0), a.retain_graph, Tensor(), a.create_graph); return std::nullopt;
      case OpId::BackwardGrad: backward(in(s, 0), a.retain_graph, in(s, 1), a.create_graph); return std::nullopt;
      case OpId::RetainGrad: retain_grad(in(s, 0)); return std::nullopt;
      case OpId::AutogradGrad: {
        Tensor g = autograd_grad(in(s, 0), in(s, 1), a.retain_graph, a.allow_unused, a.create_graph);
        if (!g.defined()) return std::nullopt;
        return g;
      }
      case OpId::AutogradGradOutputs: {
        Tensor g = autograd_grad(in(s, 0), in(s, 1), in(s, 2), a.retain_graph, a.allow_unused, a.create_graph);
        if (!g.defined()) return std::nullopt;
        return g;
      }
      case OpId::BackwardRoots: backward({in(s, 0), in(s, 1)}, a.retain_graph, a.create_graph); return std::nullopt;
      case OpId::SplitWithSizes: return jd::pick_output(split_with_sizes(in(s, 0), a.dims, a.dim), a.index);
      case OpId::UnsafeSplit: return jd::pick_output(unsafe_split(in(s, 0), a.size, a.dim), a.index);
      case OpId::UnsafeSplitWithSizes:
        return jd::pick_output(unsafe_split_with_sizes(in(s, 0), a.dims, a.dim), a.index);
      case OpId::UnsafeChunk: return jd::pick_output(unsafe_chunk(in(s, 0), a.chunks, a.dim), a.index);
      case OpId::Where: return where(in(s, 0), in(s, 1), in(s, 2));
      case OpId::Index: return index(in(s, 0), in(s, 1));
      case OpId::IndexPut_: return index_put_(in(s, 0), in(s, 1), in(s, 2), a.accumulate);
      case OpId::MaskedFill: return masked_fill(in(s, 0), in(s, 1), to_impl(a.scalar));
      case OpId::MaskedFill_: return masked_fill_(in(s, 0), in(s, 1), to_impl(a.scalar));
      case OpId::Addcmul: return addcmul(in(s, 0), in(s, 1), in(s, 2), to_impl(a.scalar));
      case OpId::Addcmul_: return addcmul_(in(s, 0), in(s, 1), in(s, 2), to_impl(a.scalar));
      case OpId::Eq: return eq(in(s, 0), in(s, 1));
      case OpId::Ne: return ne(in(s, 0), in(s, 1));
      case OpId::OnesLike: return like_on(ones_like(in(s, 0), to_impl(a.memory_format)), a.like_device);
      case OpId::FullLike:
        return like_on(full_like(in(s, 0), to_impl(a.scalar), to_impl(a.memory_format)), a.like_device);
      case OpId::ToMemoryFormat: return to(in(s, 0), in(s, 0).dtype(), a.copy, to_impl(a.memory_format));
      case OpId::ToDTypeMemoryFormat: return to(in(s, 0), to_impl(a.dtype), a.copy, to_impl(a.memory_format));
      case OpId::Grad: {
        Tensor g = autograd::grad(in(s, 0));
        if (!g.defined()) return std::nullopt;
        return g;
      }
      case OpId::SetGrad: autograd::set_grad(in(s, 0), in(s, 1)); return std::nullopt;
      case OpId::ResetGrad: autograd::set_grad(in(s, 0), Tensor()); return std::nullopt;
      case OpId::SetData: set_data(in(s, 0), in(s, 1)); return std::nullopt;
      case OpId::RequiresGrad_: return requires_grad_(in(s, 0), a.requires_grad);
#define PARITY_UNARY_CASE(op, function) \
  case OpId::op: return function(in(s, 0));
      PARITY_IMPL_UNARY_OPS(PARITY_UNARY_CASE)
#undef PARITY_UNARY_CASE
#define PARITY_UNARY_OUT_CASE(op, function) \
  case OpId::op: return function(in(s, 0), in(s, 1));
      PARITY_IMPL_UNARY_OUT_OPS(PARITY_UNARY_OUT_CASE)
#undef PARITY_UNARY_OUT_CASE
    }
    PARITY_HARNESS_UNREACHABLE("impl has no call for op " + std::string(pg::spec(s.op).name));
  }

  // The session follows its backend's release for its whole life (impl's choice is process-wide, and views'
  // grad_fn, read lazily by observe, consult it too); the choice before it is restored when it ends. First, so
  // that the values below are destroyed under it.
  // Declared first, so destroyed last, once every tensor of the session is freed: the blocks impl's allocator
  // cached go back before the oracle's session runs in this process (impl/storage.h, release_cpu_cache).
  struct ReleaseCpuCacheAtEnd {
    ~ReleaseCpuCacheAtEnd() { release_cpu_cache(); }
  } release_cpu_cache_at_end_;
  TargetTorchVersionGuard follows_;
  // As the release followed, for the session's whole life: every cuda tensor the oracle makes is host memory.
  std::optional<impl::cuda::HostBackedScope> host_backed_;
  const Role role_;
  std::vector<std::optional<Tensor>> values_;
  std::map<const void*, Tensor> kept_grads_;  // every gradient grad_tensor_key named, alive for unique keys
  std::map<std::int64_t, DeepcopyMemo> memos_;  // one per copy.deepcopy call of the program
  std::optional<bool> flaky_this_run_;          // a Flaky fault's turn, taken at its op's first run
  // The faults planted in impl (PARITY_PLANT), or null when none is: the common case costs a step nothing.
  const std::vector<PlantedFault>* const faults_ =
      role_ == Role::Impl && !planted_faults().empty() ? &planted_faults() : nullptr;
  CombinationFaults combination_;               // what the combination faults planted keep across steps
};

class ImplBackend final : public jd::Backend {
 public:
  ImplBackend(TorchVersion follows, Role role) : follows_(follows), role_(role) {}
  std::string name() const override { return role_ == Role::Impl ? "impl" : "impl-cpu"; }
  std::string version() const override {
    return std::string(role_ == Role::Impl ? "parity-impl" : "parity-impl on the CPU") + " (follows torch " +
           follows_.str() + ")";
  }
  std::unique_ptr<jd::Session> start() override { return std::make_unique<ImplSession>(follows_, role_); }

 private:
  TorchVersion follows_;
  Role role_;
};

}  // namespace

TorchVersion oracle_torch_version() {
  static const TorchVersion v = [] {
    const auto parsed = TorchVersion::parse(PARITY_ORACLE_TORCH_VERSION);
    PARITY_HARNESS_ASSERT(parsed.has_value(), "the build's LibTorch version '" PARITY_ORACLE_TORCH_VERSION
                                              "' does not parse as major.minor");
    return *parsed;
  }();
  return v;
}

std::unique_ptr<judge::Backend> make_impl_backend(std::optional<TorchVersion> follows) {
  return std::make_unique<ImplBackend>(follows.value_or(oracle_torch_version()), Role::Impl);
}

std::unique_ptr<judge::Backend> make_impl_cpu_oracle(std::optional<TorchVersion> follows) {
  return std::make_unique<ImplBackend>(follows.value_or(oracle_torch_version()), Role::CpuOracle);
}

int cuda_device_count() { return impl::cuda::device_count(); }
bool cuda_context_usable() { return !g_device_broken_by_plant && impl::cuda::context_usable(); }

bool built_with_cuda() {
#ifdef PARITY_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace parity::impl_backend
