// The LibTorch adapter. Every other piece of parity is judged against what this file makes LibTorch do, so each
// op is the plain LibTorch call its repro template prints, with nothing added that could change autograd,
// aliasing or layout behaviour.
#include "oracle/torch_backend.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Flags.h>
#include <c10/util/Logging.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "judge/error_category.h"
#include "judge/exception_type.h"
#include "program/content.h"
#include "program/internal_assert.h"

namespace parity::oracle {

namespace {

using program::DType;
using program::OpId;
using program::Step;
using judge::StepError;
using judge::TensorObs;

// Reading .grad of a non-leaf (which every observation after a backward does) makes LibTorch TORCH_WARN, and so
// do a few ops on odd inputs; a campaign runs millions of steps, so warnings are swallowed while a session runs.
// The warning-handler API changed shape in 2.0 (c10::Warning became a class, the setters moved to
// c10::WarningUtils), hence the two spellings.
#if TORCH_VERSION_MAJOR >= 2
class SilentWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};
using WarningGuard = c10::WarningUtils::WarningHandlerGuard;
#else
class SilentWarnings : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation&, const std::string&, const bool) override {}
};
using WarningGuard = c10::Warning::WarningHandlerGuard;
#endif

// One handler for the process: guards may outlive a session or nest, and must never point at a dead handler.
c10::WarningHandler* silent_warnings() {
  static SilentWarnings handler;
  return &handler;
}

// LibTorch's CPU allocator reports a failed allocation as a c10::Error ("[enforce fail at alloc_cpu.cpp:75] err
// == 0. DefaultCPUAllocator: can't allocate memory: ..." in 1.13, an OutOfMemoryError from 2.x on) without calling the new-handler that operator new calls. It is called here as
// operator new would: in an evaluating process it ends the process as out of memory
// (engine/evaluation_process.h), as impl's allocator does; without a handler the error stays the step's outcome.
void call_new_handler_if_allocation_failed(const c10::Error& e) {
  const bool allocation_failed = dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
                                 std::string_view(e.what_without_backtrace()).find("DefaultCPUAllocator: ") !=
                                     std::string_view::npos;
  if (!allocation_failed) return;
  if (const std::new_handler handler = std::get_new_handler()) handler();
}

// The c10 class of a LibTorch error, most derived first.
judge::ExceptionType exception_type_of(const c10::Error& e) {
  using T = judge::ExceptionType;
  if (dynamic_cast<const c10::IndexError*>(&e)) return T::IndexError;
  if (dynamic_cast<const c10::ValueError*>(&e)) return T::ValueError;
  if (dynamic_cast<const c10::TypeError*>(&e)) return T::TypeError;
  if (dynamic_cast<const c10::NotImplementedError*>(&e)) return T::NotImplementedError;
  if (dynamic_cast<const c10::LinAlgError*>(&e)) return T::LinAlgError;
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return T::OutOfMemoryError;
  return typeid(e) == typeid(c10::Error) ? T::Error : T::Other;
}

c10::ScalarType to_torch(DType d) {
  switch (d) {
    case DType::Float32: return torch::kFloat32;
    case DType::Float64: return torch::kFloat64;
    case DType::Int64: return torch::kInt64;
    case DType::Int32: return torch::kInt32;
    case DType::Float16: return torch::kFloat16;
    case DType::BFloat16: return torch::kBFloat16;
    case DType::Bool: return torch::kBool;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this DType");
}

DType from_torch(c10::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return DType::Float32;
    case torch::kFloat64: return DType::Float64;
    case torch::kInt64: return DType::Int64;
    case torch::kInt32: return DType::Int32;
    case torch::kFloat16: return DType::Float16;
    case torch::kBFloat16: return DType::BFloat16;
    case torch::kBool: return DType::Bool;
    default: break;
  }
  // No op in the table makes another dtype from these four; reaching here means the table grew without us.
  PARITY_HARNESS_UNREACHABLE(std::string("LibTorch produced a dtype parity does not model: ") + c10::toString(t));
}

// A program's cuda is the current CUDA device: what the repro's torch::kCUDA names too.
torch::Device to_torch(program::Device d) {
  switch (d) {
    case program::Device::CPU: return torch::Device(torch::kCPU);
    case program::Device::CUDA: return torch::Device(torch::kCUDA);
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

c10::optional<torch::Device> to_torch(const std::optional<program::Device>& d) {
  if (!d) return c10::nullopt;
  return to_torch(*d);
}

c10::MemoryFormat to_torch(program::MemoryFormat m) {
  switch (m) {
    case program::MemoryFormat::Contiguous: return c10::MemoryFormat::Contiguous;
    case program::MemoryFormat::ChannelsLast: return c10::MemoryFormat::ChannelsLast;
    case program::MemoryFormat::ChannelsLast3d: return c10::MemoryFormat::ChannelsLast3d;
    case program::MemoryFormat::Preserve: return c10::MemoryFormat::Preserve;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this MemoryFormat");
}

// The scalar's C++ type is what LibTorch's type promotion sees: an int64 scalar keeps an integer tensor
// integral, a double makes it floating, a bool is the lowest category.
at::Scalar to_torch(const program::Scalar& s) {
  switch (s.kind) {
    case program::Scalar::Kind::Int: return at::Scalar(static_cast<std::int64_t>(s.value));
    case program::Scalar::Kind::Float: return at::Scalar(s.value);
    case program::Scalar::Kind::Bool: return at::Scalar(s.value != 0.0);
  }
  PARITY_HARNESS_UNREACHABLE("no case for this Scalar::Kind");
}

c10::optional<at::Scalar> to_torch(const std::optional<program::Scalar>& s) {
  if (!s) return c10::nullopt;
  return to_torch(*s);
}

std::vector<at::Scalar> to_torch(const std::vector<program::Scalar>& elements) {
  std::vector<at::Scalar> out;
  out.reserve(elements.size());
  for (const auto& e : elements) out.push_back(to_torch(e));
  return out;
}

std::vector<double> flat_values(const torch::Tensor& t) {
  // Logical row-major order, whatever the strides (expanded, overlapping, channels_last).
  torch::Tensor c = t.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

std::vector<std::int64_t> to_vector(c10::IntArrayRef a) { return std::vector<std::int64_t>(a.begin(), a.end()); }

// A step's value: what its call returned, nothing when that is an undefined tensor (.grad of a tensor without one,
// autograd.grad's unused input).
std::optional<torch::Tensor> value_of(const torch::Tensor& t) {
  if (!t.defined()) return std::nullopt;
  return t;
}

#include "oracle/deepcopy_recipe.inc"
#include "oracle/literal_tensor_recipe.inc"

class TorchSession final : public judge::Session {
 public:
  // What the program made goes when the session ends, but autograd's references can form cycles that nothing
  // frees: a node saving a tensor whose grad_fn it becomes (an in-place op with the tensor as another operand too,
  // x.mul_(x)), a leaf's gradient whose history ends in that leaf's AccumulateGrad (backward with create_graph),
  // two tensors set as each other's gradient. PyTorch makes the same cycles. Without this a persistent worker kept
  // every one its cases made (LeakSanitizer's reports in the asan-ubsan build). So every gradient is dropped, and
  // every node reachable from what the session holds releases its saved tensors, as a backward that does not
  // retain its graph does.
  // How an edge owns its node: std::shared_ptr up to LibTorch 1.13, c10::intrusive_ptr from 2.x.
  using NodeRef = decltype(torch::autograd::Edge::function);

  // A new owning reference to a live node, by whichever of the two its release uses (N is Node: a template only
  // so that the branch of the other release is not compiled).
  template <typename N>
  static NodeRef strong_ref(N* fn) {
    if constexpr (requires { fn->shared_from_this(); }) return fn->shared_from_this();
    else return c10::intrusive_ptr<N>::unsafe_reclaim_from_nonowning(fn);
  }

  ~TorchSession() override {
    WarningGuard quiet(silent_warnings());  // .grad of a non-leaf warns
    std::vector<torch::Tensor> tensors;
    for (const auto& v : values_)
      if (v) tensors.push_back(*v);
    for (const auto& [key, g] : kept_grads_) tensors.push_back(g);
    for (const auto& [id, memo] : memos_) {
      for (const auto& [key, t] : memo.tensors) tensors.push_back(t);
      for (const auto& [key, t] : memo.storages) tensors.push_back(t);
    }
    std::set<const void*> seen;
    std::vector<NodeRef> nodes;
    while (!tensors.empty()) {
      const torch::Tensor t = std::move(tensors.back());
      tensors.pop_back();
      if (!t.defined() || !seen.insert(t.unsafeGetTensorImpl()).second) continue;
      // The node it holds: grad_fn() could regenerate a view's history, or raise.
      if (torch::autograd::Node* fn = torch::autograd::impl::grad_fn_unsafe(t))
        nodes.push_back(strong_ref(fn));
      if (t.is_view()) tensors.emplace_back(t._base());
      if (t.grad().defined()) {
        tensors.push_back(t.grad());
        t.mutable_grad().reset();
      }
    }
    std::set<const torch::autograd::Node*> released;
    while (!nodes.empty()) {
      const NodeRef fn = std::move(nodes.back());
      nodes.pop_back();
      if (!released.insert(fn.get()).second) continue;
      fn->release_variables();
      for (const auto& edge : fn->next_edges())
        if (edge.function) nodes.push_back(edge.function);
    }
  }

  void execute(const Step& step, int index) override {
    WarningGuard quiet(silent_warnings());
    PARITY_HARNESS_ASSERT(index >= 0, "negative step index");
    if (values_.size() <= static_cast<std::size_t>(index)) values_.resize(static_cast<std::size_t>(index) + 1);
    values_[index].reset();
    try {
      torch::AutoGradMode grad_mode(step.grad_enabled);
      std::optional<torch::Tensor> out = compute(step);
      if (out) values_[index] = std::move(*out);
    } catch (const c10::Error& e) {
      call_new_handler_if_allocation_failed(e);
      std::string msg = e.what_without_backtrace();
      throw StepError(judge::classify_torch_message(msg), msg, exception_type_of(e));
    } catch (const StepError&) {
      throw;  // the harness's own refusal (judge::pick_output), already categorised
    } catch (const program::InternalError&) {
      throw;  // a bug in this adapter, not LibTorch's behaviour
    } catch (const std::exception& e) {
      std::string msg = e.what();
      const auto type = typeid(e) == typeid(std::runtime_error) ? judge::ExceptionType::RuntimeError
                        : typeid(e) == typeid(std::logic_error)   ? judge::ExceptionType::LogicError
                                                                  : judge::ExceptionType::Other;
      throw StepError(judge::classify_torch_message(msg), msg, type);
    }
  }

  bool has_value(int id) const override {
    return id >= 0 && static_cast<std::size_t>(id) < values_.size() && values_[id].has_value();
  }

  TensorObs observe(int id, bool with_values, bool with_grad) override {
    // A value LibTorch made but cannot read back (e.g. a negative size) raises here: pass on its message alone.
    try {
      return observe_value(id, with_values, with_grad);
    } catch (const c10::Error& e) {
      call_new_handler_if_allocation_failed(e);
      throw std::runtime_error(e.what_without_backtrace());
    }
  }

  TensorObs observe_value(int id, bool with_values, bool with_grad) {
    WarningGuard quiet(silent_warnings());
    const torch::Tensor& t = value(id);
    TensorObs o;
    o.value = id;
    o.sizes = to_vector(t.sizes());
    o.strides = to_vector(t.strides());
    o.offset = t.storage_offset();
    o.dtype = from_torch(t.scalar_type());
    o.device = t.device().str();
    o.requires_grad = t.requires_grad();
    // Reading grad_fn regenerates a view's history and raises for views that may not be rebased.
    o.is_leaf = t.is_leaf();
    o.retains_grad = t.retains_grad();
    try {
      o.grad_fn = t.grad_fn() ? t.grad_fn()->name() : "";
    } catch (const c10::Error& e) {
      o.grad_fn = judge::raised_marker(judge::classify_torch_message(e.what_without_backtrace()));
    }
    o.version = static_cast<std::int64_t>(t._version());
    o.contiguous = t.is_contiguous();
    o.channels_last = t.is_contiguous(c10::MemoryFormat::ChannelsLast);
    o.channels_last_3d = t.is_contiguous(c10::MemoryFormat::ChannelsLast3d);
    o.non_overlapping_dense = t.is_non_overlapping_and_dense();
    o.values_defined = with_values;
    if (with_values) o.values = flat_values(t);
    if (with_grad) {
      const torch::Tensor& g = t.grad();
      if (g.defined()) {
        judge::GradObs go;
        go.sizes = to_vector(g.sizes());
        go.strides = to_vector(g.strides());
        go.dtype = from_torch(g.scalar_type());
        go.values = flat_values(g);
        go.version = static_cast<std::int64_t>(g._version());
        o.grad = std::move(go);
      }
    }
    return o;
  }

  std::vector<double> values(int id) const override {
    try {
      return flat_values(value(id));
    } catch (const c10::Error& e) {
      call_new_handler_if_allocation_failed(e);
      throw std::runtime_error(e.what_without_backtrace());
    }
  }
  const void* storage_key(int id) const override { return value(id).storage().unsafeGetStorageImpl(); }
  const void* tensor_key(int id) const override { return value(id).unsafeGetTensorImpl(); }
  const void* grad_storage_key(int id) const override {
    WarningGuard quiet(silent_warnings());  // .grad of a non-leaf warns
    const torch::Tensor& g = value(id).grad();
    return g.defined() ? g.storage().unsafeGetStorageImpl() : nullptr;
  }
  const void* grad_tensor_key(int id) override {
    WarningGuard quiet(silent_warnings());
    const torch::Tensor& g = value(id).grad();
    if (!g.defined()) return nullptr;
    kept_grads_.emplace(g.unsafeGetTensorImpl(), g);
    return g.unsafeGetTensorImpl();
  }
  const void* base_key(int id) const override {
    const torch::Tensor& t = value(id);
    return t.is_view() ? t._base().unsafeGetTensorImpl() : nullptr;
  }

 private:
  const torch::Tensor& value(int id) const {
    PARITY_HARNESS_ASSERT(has_value(id), "value " + std::to_string(id) + " does not exist");
    return *values_[id];
  }

  // The op table's calls: each case is generated from its op's C++ repro template (oracle/dispatch_gen.cpp), so
  // the call made here is the one a repro prints. Operands are the values themselves, as the repro's variables are
  // (an out= form writes into its operand 0).
  std::optional<torch::Tensor> compute(const Step& s) {
    const program::Attrs& a = s.attrs;
    auto in = [&](std::size_t k) -> torch::Tensor& {
      PARITY_HARNESS_ASSERT(k < s.inputs.size(), "step has too few operands");
      PARITY_HARNESS_ASSERT(has_value(s.inputs[k]), "value " + std::to_string(s.inputs[k]) + " does not exist");
      return *values_[static_cast<std::size_t>(s.inputs[k])];
    };
    switch (s.op) {
#include "oracle/dispatch.inc"
    }
    PARITY_HARNESS_UNREACHABLE("op missing from the LibTorch backend: " + std::string(program::spec(s.op).name));
  }

  std::vector<std::optional<torch::Tensor>> values_;
  std::map<const void*, torch::Tensor> kept_grads_;  // every gradient grad_tensor_key named, alive for unique keys
  std::map<std::int64_t, DeepcopyMemo> memos_;  // one per copy.deepcopy call of the program
};

class TorchBackend final : public judge::Backend {
 public:
  TorchBackend() {
    static std::once_flag once;
    std::call_once(once, [] {
      // Programs use tiny tensors, where intra-op threads only cost; one thread also keeps LibTorch safe to use
      // in a child forked for crash isolation (a forked child inherits no worker threads).
      torch::set_num_threads(1);
      // Every c10::Error captures a backtrace when it is made; LibTorch 1.13 also symbolizes it then (dladdr per
      // frame: milliseconds a raise, most of a campaign's time, as a share of steps are meant to raise). parity
      // reads what_without_backtrace() only, so the fetcher returns nothing. Process-wide: a program that embeds
      // the oracle loses LibTorch's backtraces, which it never shows.
      c10::SetStackTraceFetcher(std::function<std::string()>([] { return std::string(); }));
      // Some LibTorch 1.13 backward formulas read memory they never wrote: CopySlices through an as_strided view
      // that reaches storage its base's elements do not cover takes its gradient from a fresh new_empty_strided
      // buffer. A child forked per case got fresh zero pages there; a persistent worker gets whatever an earlier
      // case left, so the same program gave other gradients from one run to the next. Zero-filled allocations
      // make LibTorch's answer a function of the program alone, as it was in a fresh process.
      int argc = 2;
      char arg0[] = "parity", arg1[] = "--caffe2_cpu_allocator_do_zero_fill=true";
      char* args[] = {arg0, arg1, nullptr};
      char** argv = args;
      if (!c10::ParseCommandLineFlags(&argc, &argv))
        PARITY_HARNESS_UNREACHABLE("LibTorch refused --caffe2_cpu_allocator_do_zero_fill");
    });
  }
  std::string name() const override { return "libtorch"; }
  std::string version() const override { return torch_version(); }
  std::unique_ptr<judge::Session> start() override { return std::make_unique<TorchSession>(); }
};

}  // namespace

std::unique_ptr<judge::Backend> make_torch_backend() { return std::make_unique<TorchBackend>(); }

std::optional<std::string> registered_schema(const std::string& name, const std::string& overload) {
  const auto op = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!op) return std::nullopt;
  return c10::toString(op->schema());
}

int cuda_device_count() { return static_cast<int>(torch::cuda::device_count()); }

bool linked_with_cuda() {
#ifdef PARITY_ORACLE_CUDA
  return true;
#else
  return false;
#endif
}

std::string torch_version() {
#ifdef TORCH_VERSION
  return TORCH_VERSION;
#else
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
#endif
}

}  // namespace parity::oracle
