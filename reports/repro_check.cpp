#include "reports/repro_check.h"

#include "program/internal_assert.h"

namespace parity::reports {

using judge::Divergence;
using judge::StepObs;
using judge::TensorObs;
using judge::Trace;
using Kind = judge::DivergenceKind;
using Live = ReproCheck::Live;

namespace {

// How a repro observes a kind. The metadata kinds are those judge::observation_text renders, but for how often
// .grad became another tensor, which counts every step since it was first seen: a repro does not track it.
Live live_kind(Kind k) {
  if (k == Kind::GradIdentity) return Live::Recorded;
  if (judge::observation_text(k, TensorObs{})) return Live::Tensor;
  if (k == Kind::Values || k == Kind::GradValues) return Live::Element;
  if (k == Kind::Status || k == Kind::Crash || k == Kind::Timeout || k == Kind::OutOfMemory) return Live::Status;
  if (k == Kind::ErrorCategory || k == Kind::Message) return Live::Message;
  if (k == Kind::ExceptionType) return Live::ExceptionType;
  return Live::Recorded;  // step_count, observed_set, schema, protocol: parity's own observations
}

std::string_view why_recorded(Kind k) {
  switch (k) {
    case Kind::GradIdentity: return "how often .grad became another tensor is counted over the whole program";
    case Kind::StepCount: return "the number of steps a backend answered is parity's own observation";
    case Kind::ObservedSet: return "which values a step observed is parity's own bookkeeping";
    case Kind::Schema: return "a schema check snapshots every operand around the step";
    case Kind::Protocol: return "the protocol is between parity and a backend";
    case Kind::Values:
    case Kind::GradValues: return "this value was summarised, not kept element by element";
    // A kind a repro observes, held as recorded only where the difference is tied to no step or value.
    case Kind::Status:
    case Kind::ErrorCategory:
    case Kind::ExceptionType:
    case Kind::Message:
    case Kind::Crash:
    case Kind::Timeout:
    case Kind::OutOfMemory:
    case Kind::Sizes:
    case Kind::DType:
    case Kind::Device:
    case Kind::Strides:
    case Kind::StridesSize1:
    case Kind::Offset:
    case Kind::Alias:
    case Kind::Identity:
    case Kind::View:
    case Kind::Version:
    case Kind::RequiresGrad:
    case Kind::IsLeaf:
    case Kind::RetainsGrad:
    case Kind::GradFn:
    case Kind::Contiguity:
    case Kind::GradDefined:
    case Kind::GradSizes:
    case Kind::GradDType:
    case Kind::GradAlias:
    case Kind::GradVersion:
    case Kind::GradStrides:
    case Kind::GradStridesSize1: return "the difference is tied to no one step and value of the program";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this divergence kind");
}

const StepObs* step_of(const Trace* t, int step) {
  if (!t || step < 0 || static_cast<std::size_t>(step) >= t->steps.size()) return nullptr;
  return &t->steps[static_cast<std::size_t>(step)];
}

const TensorObs* observed(const StepObs* s, int value) {
  if (!s) return nullptr;
  for (const TensorObs& o : s->observed)
    if (o.value == value) return &o;
  return nullptr;
}

// How a side that made no trace, or none of this step, ended: `died` is its divergence of the same evaluation.
std::string missing_step(const Trace* t, const std::optional<Divergence>& died) {
  if (died) {
    switch (died->kind) {
      case Kind::Crash: return "crashed" + (died->signal.empty() ? std::string() : " (" + died->signal + ")");
      case Kind::Timeout: return "timed out";
      case Kind::OutOfMemory: return "ran out of memory";
      default: break;
    }
  }
  return t ? "did not get to this step" : "made no trace";
}

std::string status_text(const Trace* t, int step, const std::optional<Divergence>& died) {
  const StepObs* s = step_of(t, step);
  if (!s) return missing_step(t, died);
  switch (s->status) {
    case StepObs::Status::Ok: return "ok";
    case StepObs::Status::Error: return "raised";
    case StepObs::Status::Skipped: return "skipped";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this step status");
}

// What a live observation prints for a value its step did not make, so that the texts compare.
std::string no_value(const Trace* t, int step, const std::optional<Divergence>& died) {
  const std::string status = status_text(t, step, died);
  if (status == "raised") return "no value: the step raised";
  if (status == "skipped") return "no value: the step was skipped";
  if (status == "ok") return "not observed";
  return status;
}

// A raised grad_fn names parity's error category, which a repro cannot tell: both sides say only that it raised.
std::string tensor_text(Kind kind, const Trace* t, int step, int value, const std::optional<Divergence>& died) {
  const TensorObs* o = observed(step_of(t, step), value);
  if (!o) return no_value(t, step, died);
  std::string text = *judge::observation_text(kind, *o);
  if (kind == Kind::GradFn && judge::raised_marker_category(text)) return "<raised>";
  return text;
}

std::string message_text(const Trace* t, int step, const std::optional<Divergence>& died) {
  const StepObs* s = step_of(t, step);
  if (!s || s->status != StepObs::Status::Error) return status_text(t, step, died) + " (nothing raised)";
  return judge::normalised_message(s->message);
}

// A side's elements, or nullopt where it has none to compare one by one (no value, a summary, unread memory).
std::optional<std::vector<double>> elements(Kind kind, const Trace* t, int step, int value) {
  const TensorObs* o = observed(step_of(t, step), value);
  if (!o) return std::nullopt;
  if (kind == Kind::GradValues) {
    if (!o->grad || o->grad->summary || o->grad->values.empty()) return std::nullopt;
    return o->grad->values;
  }
  if (!o->values_defined || o->summary) return std::nullopt;
  return o->values;
}

program::DType dtype_of(Kind kind, const Trace* t, int step, int value) {
  const TensorObs* o = observed(step_of(t, step), value);
  if (!o) return program::DType::Float32;
  return kind == Kind::GradValues && o->grad ? o->grad->dtype : o->dtype;
}

}  // namespace

ReproSides finding_repro_sides(const Finding& f) {
  ReproSides sides;
  sides.judge = repro_expectations(f.oracle, f.oracle_trace);
  if (f.oracle != Oracle::LibTorch) return sides;
  sides.library = f.impl_trace ? &*f.impl_trace : nullptr;
  sides.point = sides.now = f.divergence;
  sides.judge_name = judge_title(f.oracle, f.libtorch_version);
  sides.found_by = f.parity_commit;
  return sides;
}

std::optional<ReproCheck> repro_check(const ReproSides& sides) {
  if (!sides.point) return std::nullopt;
  const Divergence& point = *sides.point;
  ReproCheck c;
  c.kind = point.kind;
  c.step = point.step;
  c.value = point.value;
  c.live = live_kind(point.kind);
  // The library's own divergence of this evaluation, where it died: what its missing trace says.
  const std::optional<Divergence>& died = sides.now;
  const std::optional<Divergence> nothing;  // the judge's trace is never missing for a reason of its own
  const bool on_value = point.step >= 0 && point.value >= 0;
  if ((c.live == Live::Tensor || c.live == Live::Element) && !on_value) c.live = Live::Recorded;
  if (c.live != Live::Tensor && c.live != Live::Element && c.live != Live::Recorded && point.step < 0)
    c.live = Live::Recorded;
  if (c.live == Live::Element) {
    auto judge_values = elements(point.kind, sides.judge, point.step, point.value);
    auto library_values = elements(point.kind, sides.library, point.step, point.value);
    const TensorObs* library_obs = observed(step_of(sides.library, point.step), point.value);
    // A value the library made whose elements cannot be listed (a summary) cannot be held element by element.
    if (!judge_values || (library_obs && !library_values)) {
      c.live = Live::Recorded;
    } else {
      c.judge_values = std::move(*judge_values);
      c.library_has_values = library_values.has_value();
      if (library_values) c.library_values = std::move(*library_values);
      c.tolerance = judge::tolerance(dtype_of(point.kind, sides.judge, point.step, point.value));
      c.library = c.library_has_values ? "" : no_value(sides.library, point.step, died);
      return c;
    }
  }
  switch (c.live) {
    case Live::Tensor:
      c.library = tensor_text(point.kind, sides.library, point.step, point.value, died);
      c.judge = tensor_text(point.kind, sides.judge, point.step, point.value, nothing);
      break;
    case Live::Status:
      c.library = status_text(sides.library, point.step, died);
      c.judge = status_text(sides.judge, point.step, nothing);
      break;
    case Live::Message:
      c.library = message_text(sides.library, point.step, died);
      c.judge = message_text(sides.judge, point.step, nothing);
      break;
    case Live::ExceptionType: {
      const StepObs* l = step_of(sides.library, point.step);
      const StepObs* j = step_of(sides.judge, point.step);
      // A side that raised is named by its class (the printer spells it in its language); one that did not, or
      // raised a class it did not name, by these texts.
      auto text = [&](const StepObs* s, const Trace* t, const std::optional<Divergence>& d) {
        return s && s->status == StepObs::Status::Error ? std::string("a class it did not name")
                                                        : status_text(t, point.step, d) + " (nothing raised)";
      };
      if (l && l->status == StepObs::Status::Error) c.library_exception = l->exception;
      if (j && j->status == StepObs::Status::Error) c.judge_exception = j->exception;
      c.library = text(l, sides.library, died);
      c.judge = text(j, sides.judge, nothing);
      break;
    }
    case Live::Element: break;
    case Live::Recorded: {
      c.why_recorded = why_recorded(point.kind);
      // This evaluation's sides where it diverges the same way at the same place; else the library agrees here.
      const bool same = sides.now && sides.now->kind == point.kind && sides.now->step == point.step &&
                        sides.now->value == point.value;
      c.judge = same ? sides.now->oracle : point.oracle;
      c.library = same ? sides.now->impl : c.judge;
      break;
    }
  }
  return c;
}

}  // namespace parity::reports

namespace parity::reports {

namespace {

// The check's helpers in C++. observe() renders as judge::observation_text does, from the same facts the oracle
// adapter reads (oracle/torch_backend.cpp): storage and TensorImpl identity, the smallest value id first.
constexpr std::string_view kCppCheckPrelude = R"repro(
// ---- The check: the observation parity found to differ, made here and held against the library's ----
#include <cctype>
#include <exception>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

using Values = std::vector<std::pair<int, torch::Tensor>>;  // the program values defined so far, by id
static std::vector<std::string> failed;

static std::string ints(c10::IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
static std::string flag(bool b) { return b ? "true" : "false"; }
static std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case torch::kFloat: return "float32";
    case torch::kDouble: return "float64";
    case torch::kHalf: return "float16";
    case torch::kBFloat16: return "bfloat16";
    case torch::kLong: return "int64";
    case torch::kInt: return "int32";
    case torch::kBool: return "bool";
    default: return c10::toString(t);
  }
}
static const void* storage_of(const at::TensorBase& t) { return t.storage().unsafeGetStorageImpl(); }
static const void* tensor_of(const at::TensorBase& t) { return t.unsafeGetTensorImpl(); }
static const void* grad_storage_of(const torch::Tensor& t) {
  return t.grad().defined() ? t.grad().storage().unsafeGetStorageImpl() : nullptr;
}
// The smallest id of a program value whose key is `key`, as parity names aliases; -1 when none.
template <typename KeyOf>
static int first(const Values& values, const void* key, KeyOf key_of) {
  for (const auto& [id, t] : values)
    if (t.defined() && key_of(t) == key) return id;
  return -1;
}
static const torch::Tensor* value_of(const Values& values, int id) {
  for (const auto& [i, t] : values)
    if (i == id && t.defined()) return &t;
  return nullptr;
}
static std::string observe_grad(const std::string& kind, const torch::Tensor& g, const Values& values) {
  if (!g.defined()) return "undefined";
  if (kind == "grad_defined") return "defined";
  if (kind == "grad_sizes") return ints(g.sizes());
  if (kind == "grad_dtype") return dtype_name(g.scalar_type());
  if (kind == "grad_version") return std::to_string(g._version());
  if (kind == "grad_strides" || kind == "grad_strides_size1") return ints(g.strides());
  const int j = first(values, storage_of(g), storage_of), k = first(values, storage_of(g), grad_storage_of);
  return (j < 0 ? "own storage" : "shares storage with v" + std::to_string(j)) + ", the .grad of v" + std::to_string(k);
}
// Value `id`'s `kind`, as parity renders it (judge::observation_text).
static std::string observe(const std::string& kind, int id, const Values& values) {
  const torch::Tensor* found = value_of(values, id);
  if (!found) return "no value: the step raised";
  const torch::Tensor& t = *found;
  if (kind == "sizes") return ints(t.sizes());
  if (kind == "dtype") return dtype_name(t.scalar_type());
  if (kind == "device") return t.device().str();
  if (kind == "strides" || kind == "strides_size1") return ints(t.strides());
  if (kind == "offset") return std::to_string(t.storage_offset());
  if (kind == "alias") {
    const int j = first(values, storage_of(t), storage_of);
    return j == id ? "own storage" : "shares storage with v" + std::to_string(j);
  }
  if (kind == "identity") {
    const int j = first(values, tensor_of(t), tensor_of);
    return j == id ? "its own tensor" : "the same tensor as v" + std::to_string(j);
  }
  if (kind == "view") {
    if (!t.is_view()) return "not a view";
    const int j = first(values, tensor_of(t._base()), tensor_of);
    return j < 0 ? "a view of a tensor made inside an op" : "a view of v" + std::to_string(j);
  }
  if (kind == "version") return std::to_string(t._version());
  if (kind == "requires_grad") return flag(t.requires_grad());
  if (kind == "is_leaf") return flag(t.is_leaf());
  if (kind == "retains_grad") return flag(t.retains_grad());
  if (kind == "grad_fn") {
    try {
      return t.grad_fn() ? t.grad_fn()->name() : "none";
    } catch (const c10::Error&) {
      return "<raised>";
    }
  }
  if (kind == "contiguity")
    return "contiguous=" + flag(t.is_contiguous()) +
           " channels_last=" + flag(t.is_contiguous(c10::MemoryFormat::ChannelsLast)) +
           " channels_last_3d=" + flag(t.is_contiguous(c10::MemoryFormat::ChannelsLast3d)) +
           " non_overlapping_dense=" + flag(t.is_non_overlapping_and_dense());
  return observe_grad(kind, t.grad(), values);
}
static std::string message_of(const std::exception_ptr& raised) {
  if (!raised) return "ok (nothing raised)";
  std::string m;
  try {
    std::rethrow_exception(raised);
  } catch (const c10::Error& e) {
    m = e.what_without_backtrace();
  } catch (const std::exception& e) {
    m = e.what();
  } catch (...) {
    m = "(not a std::exception)";
  }
  // As parity compares messages: what varies from run to run (addresses: 0x and hex digits) taken out.
  std::string out;
  for (size_t i = 0; i < m.size(); ++i) {
    out += m[i];
    if (m[i] == '0' && i + 2 < m.size() && m[i + 1] == 'x' && std::isxdigit(static_cast<unsigned char>(m[i + 2]))) {
      out += "x<address>";
      for (i += 2; i + 1 < m.size() && std::isxdigit(static_cast<unsigned char>(m[i + 1]));) ++i;
    }
  }
  return out;
}
// The class a step raised, as parity names it (most derived first, as the oracle adapter reads it).
static std::string exception_name(const std::exception_ptr& raised) {
  if (!raised) return "ok (nothing raised)";
  try {
    std::rethrow_exception(raised);
  } catch (const c10::Error& e) {
    if (dynamic_cast<const c10::IndexError*>(&e)) return "c10::IndexError";
    if (dynamic_cast<const c10::ValueError*>(&e)) return "c10::ValueError";
    if (dynamic_cast<const c10::TypeError*>(&e)) return "c10::TypeError";
    if (dynamic_cast<const c10::NotImplementedError*>(&e)) return "c10::NotImplementedError";
    if (dynamic_cast<const c10::LinAlgError*>(&e)) return "c10::LinAlgError";
    if (dynamic_cast<const c10::OutOfMemoryError*>(&e)) return "c10::OutOfMemoryError";
    return typeid(e) == typeid(c10::Error) ? "c10::Error" : "other";
  } catch (const std::exception& e) {
    return typeid(e) == typeid(std::runtime_error) ? "std::runtime_error"
           : typeid(e) == typeid(std::logic_error) ? "std::logic_error" : "other";
  } catch (...) {
  }
  return "other";
}
static void report(const std::string& what, const std::string& live, const std::string& library,
                   const std::string& judge, bool same) {
  std::cout << "check " << what << ":\n  LibTorch here (" << TORCH_VERSION << "): " << live
            << "\n  the library under test: " << library << "\n  the judge recorded:     " << judge << "\n";
  if (!same) failed.push_back(what);
}
static void check(const std::string& what, const std::string& live, const std::string& library,
                  const std::string& judge) {
  report(what, live, library, judge, live == library);
}
// A difference no repro can observe: the recorded sides stand, the judge's for LibTorch's.
static void check_recorded(const std::string& what, const std::string& library, const std::string& judge,
                           const std::string& why) {
  std::cout << "check " << what << " (not observed here: " << why << ")\n";
  report(what, judge, library, judge, library == judge);
}
static std::vector<double> numbers(const torch::Tensor& t) {
  auto flat = t.detach().to(torch::kCPU, torch::kFloat64).contiguous().flatten();
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}
// As parity holds elements: |a - b| <= atol + rtol |b|, NaN only equal to NaN, an infinity only to itself.
static bool close(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= atol + rtol * std::fabs(b);
}
static std::string element(const std::vector<double>& v, size_t k) {
  return "element " + std::to_string(k) + " of " + std::to_string(v.size()) + " = " +
         (k < v.size() ? number(v[k]) : std::string("(missing)"));
}
// The elements of `live` (undefined: the step made no value) against the library's, within the dtype's tolerance.
static void check_elements(const std::string& what, const torch::Tensor& live, bool library_made,
                           const std::vector<double>& library, const std::string& library_missing,
                           const std::vector<double>& judge, double rtol, double atol) {
  if (!live.defined() || !library_made) {
    const std::string l = live.defined() ? "a value of " + std::to_string(live.numel()) + " elements"
                                         : "no value: the step raised";
    report(what, l, library_made ? element(library, 0) : library_missing, element(judge, 0), false);
    return;
  }
  const std::vector<double> here = numbers(live);
  size_t k = 0;
  while (k < here.size() && k < library.size() && close(library[k], here[k], rtol, atol)) ++k;
  if (k == here.size() && k == library.size()) {
    const std::string all = "all " + std::to_string(here.size()) + " elements agree";
    size_t j = 0;
    while (j < here.size() && j < judge.size() && close(judge[j], here[j], rtol, atol)) ++j;
    report(what, all, all, j == here.size() && j == judge.size() ? all : element(judge, j), true);
    return;
  }
  report(what, element(here, k), element(library, k), element(judge, k), false);
}
static int finish() {
  if (failed.empty()) {
    std::cout << "PASS: the library under test does here what LibTorch " << TORCH_VERSION << " does\n";
    return 0;
  }
  std::cout << "FAIL: the library under test differs from LibTorch " << TORCH_VERSION << " here: ";
  for (size_t i = 0; i < failed.size(); ++i) std::cout << (i ? "; " : "") << failed[i];
  std::cout << "\n";
  return 1;
}
)repro";

constexpr std::string_view kPythonCheckPrelude = R"repro(
# ---- The check: the observation parity found to differ, made here and held against the library's ----
import math
import re
import sys
import warnings

DTYPE_NAMES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
               torch.bfloat16: "bfloat16", torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}
failed = []


def ints(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def flag(b):
    return "true" if b else "false"


def storage_key(t):
    return (t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()._storage)._cdata


def grad_storage_key(t):
    return None if t.grad is None else storage_key(t.grad)


def first(values, key, wanted):
    """The smallest id of a program value whose key is `wanted`, as parity names aliases; -1 when none."""
    for i, t in sorted(values.items()):
        if t is not None and key(t) == wanted:
            return i
    return -1


def observe_grad(kind, g, values):
    if g is None:
        return "undefined"
    if kind == "grad_defined":
        return "defined"
    if kind == "grad_sizes":
        return ints(g.shape)
    if kind == "grad_dtype":
        return DTYPE_NAMES.get(g.dtype, str(g.dtype))
    if kind == "grad_version":
        return str(g._version)
    if kind in ("grad_strides", "grad_strides_size1"):
        return ints(g.stride())
    j, k = first(values, storage_key, storage_key(g)), first(values, grad_storage_key, storage_key(g))
    return ("own storage" if j < 0 else f"shares storage with v{j}") + f", the .grad of v{k}"


def observe(kind, i, values):
    """Value i's `kind`, as parity renders it (judge::observation_text)."""
    t = values.get(i)
    if t is None:
        return "no value: the step raised"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        if kind == "sizes":
            return ints(t.shape)
        if kind == "dtype":
            return DTYPE_NAMES.get(t.dtype, str(t.dtype))
        if kind == "device":
            return str(t.device)
        if kind in ("strides", "strides_size1"):
            return ints(t.stride())
        if kind == "offset":
            return str(t.storage_offset())
        if kind == "alias":
            j = first(values, storage_key, storage_key(t))
            return "own storage" if j == i else f"shares storage with v{j}"
        if kind == "identity":
            j = first(values, lambda v: v._cdata, t._cdata)
            return "its own tensor" if j == i else f"the same tensor as v{j}"
        if kind == "view":
            if not t._is_view():
                return "not a view"
            j = first(values, lambda v: v._cdata, t._base._cdata)
            return "a view of a tensor made inside an op" if j < 0 else f"a view of v{j}"
        if kind == "version":
            return str(t._version)
        if kind == "requires_grad":
            return flag(t.requires_grad)
        if kind == "is_leaf":
            return flag(t.is_leaf)
        if kind == "retains_grad":
            return flag(t.retains_grad)
        if kind == "grad_fn":
            try:
                fn = t.grad_fn
            except RuntimeError:
                return "<raised>"
            return "none" if fn is None else fn.name()
        if kind == "contiguity":
            return (f"contiguous={flag(t.is_contiguous())} "
                    f"channels_last={flag(t.is_contiguous(memory_format=torch.channels_last))} "
                    f"channels_last_3d={flag(t.is_contiguous(memory_format=torch.channels_last_3d))} "
                    f"non_overlapping_dense={flag(torch.ops.aten.is_non_overlapping_and_dense.default(t))}")
        return observe_grad(kind, t.grad, values)


def message_of(raised):
    """As parity compares messages: what varies from run to run (addresses) taken out."""
    return "ok (nothing raised)" if raised is None else re.sub(r"0x[0-9a-fA-F]+", "0x<address>", str(raised))


def exception_name(raised):
    """The class raised, as the repro names LibTorch's exceptions (torch's own by their qualified names)."""
    if raised is None:
        return "ok (nothing raised)"
    for name, cls in (("torch.linalg.LinAlgError", torch.linalg.LinAlgError),
                      ("torch.cuda.OutOfMemoryError", torch.cuda.OutOfMemoryError)):
        if isinstance(raised, cls):
            return name
    return type(raised).__name__


def report(what, live, library, judge, same):
    print(f"check {what}:\n  LibTorch here ({torch.__version__}): {live}\n  the library under test: {library}\n"
          f"  the judge recorded:     {judge}")
    if not same:
        failed.append(what)


def check(what, live, library, judge):
    report(what, live, library, judge, live == library)


def check_recorded(what, library, judge, why):
    """A difference no repro can observe: the recorded sides stand, the judge's for LibTorch's."""
    print(f"check {what} (not observed here: {why})")
    report(what, judge, library, judge, library == judge)


def numbers(t):
    return t.detach().to("cpu", torch.float64).contiguous().flatten().tolist()


def close(a, b, rtol, atol):
    """As parity holds elements: |a - b| <= atol + rtol |b|, NaN only equal to NaN, an infinity only to itself."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def element(v, k):
    return f"element {k} of {len(v)} = " + (repr(v[k]) if k < len(v) else "(missing)")


def check_elements(what, live, library, library_missing, judge, rtol, atol):
    """The elements of `live` (None: the step made no value) against the library's, within the dtype's tolerance."""
    if live is None or library is None:
        here = "no value: the step raised" if live is None else f"a value of {live.numel()} elements"
        report(what, here, library_missing if library is None else element(library, 0), element(judge, 0), False)
        return
    here = numbers(live)
    k = 0
    while k < len(here) and k < len(library) and close(library[k], here[k], rtol, atol):
        k += 1
    if k == len(here) == len(library):
        same = f"all {k} elements agree"
        j = 0
        while j < len(here) and j < len(judge) and close(judge[j], here[j], rtol, atol):
            j += 1
        report(what, same, same, same if j == len(here) == len(judge) else element(judge, j), True)
        return
    report(what, element(here, k), element(library, k), element(judge, k), False)


def finish():
    if not failed:
        print(f"PASS: the library under test does here what PyTorch {torch.__version__} does")
        sys.exit(0)
    print(f"FAIL: the library under test differs from PyTorch {torch.__version__} here: " + "; ".join(failed))
    sys.exit(1)
)repro";

// A side of an exception_type check: the class it raised, in the repro's language, or what it did instead.
std::string exception_side(const std::optional<judge::ExceptionType>& type, const std::string& otherwise,
                           ReproLang lang) {
  if (!type) return otherwise;
  if (lang == ReproLang::Cpp) return std::string(judge::to_string(*type));
  const std::string_view name = python_exception_class(*type);
  return name.empty() ? otherwise : std::string(name);
}

std::string what_text(const ReproCheck& c) {
  std::string s = c.step >= 0 ? "step " + std::to_string(c.step) : std::string("the program");
  if (c.value >= 0) s += ", v" + std::to_string(c.value);
  return s + ": " + std::string(judge::to_string(c.kind));
}

}  // namespace

std::string_view python_exception_class(judge::ExceptionType type) {
  using T = judge::ExceptionType;
  switch (type) {
    case T::Error:
    case T::RuntimeError:
    case T::LogicError: return "RuntimeError";
    case T::IndexError: return "IndexError";
    case T::ValueError: return "ValueError";
    case T::TypeError: return "TypeError";
    case T::NotImplementedError: return "NotImplementedError";
    case T::LinAlgError: return "torch.linalg.LinAlgError";
    case T::OutOfMemoryError: return "torch.cuda.OutOfMemoryError";
    case T::Other: return "";
  }
  PARITY_HARNESS_UNREACHABLE("no case for this exception type");
}

std::string_view check_prelude(ReproLang lang) {
  return lang == ReproLang::Cpp ? kCppCheckPrelude : kPythonCheckPrelude;
}

std::string check_statements(const ReproCheck& c, ReproLang lang, const std::vector<int>& values,
                             std::string_view raised) {
  const bool cpp = lang == ReproLang::Cpp;
  const std::string what = string_literal(what_text(c), lang);
  const std::string library = string_literal(c.library, lang), judge = string_literal(c.judge, lang);
  const std::string kind = string_literal(judge::to_string(c.kind), lang);
  std::string table;  // the values defined so far: {{0, v0}, ...} / {0: v0, ...}
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::string id = std::to_string(values[k]);
    table += (k ? ", " : "") + (cpp ? "{" + id + ", v" + id + "}" : id + ": v" + id);
  }
  table = cpp ? "Values{" + table + "}" : "{" + table + "}";
  const std::string v = c.value >= 0 ? "v" + std::to_string(c.value) : "";
  std::string call;
  switch (c.live) {
    case ReproCheck::Live::Tensor:
      call = "check(" + what + ", observe(" + kind + ", " + std::to_string(c.value) + ", " + table + "), " + library +
             ", " + judge + ")";
      break;
    case ReproCheck::Live::Element: {
      const bool grad = c.kind == judge::DivergenceKind::GradValues;
      const std::string live = cpp ? (grad ? v + ".defined() ? " + v + ".grad() : torch::Tensor()" : v)
                                   : (grad ? "None if " + v + " is None else " + v + ".grad" : v);
      const std::string lib = c.library_has_values ? float_list(c.library_values, lang) : (cpp ? "{}" : "None");
      call = "check_elements(" + what + ", " + live + ", " + (cpp ? bool_literal(c.library_has_values, lang) + ", " : "") +
             (cpp ? "std::vector<double>" : "") + lib + ", " + library + ", " + (cpp ? "std::vector<double>" : "") +
             float_list(c.judge_values, lang) + ", " + float_literal(c.tolerance.rtol, lang) + ", " +
             float_literal(c.tolerance.atol, lang) + ")";
      break;
    }
    case ReproCheck::Live::Status:
      call = "check(" + what + ", " + (cpp ? std::string(raised) + " ? \"raised\" : \"ok\""
                                           : "\"ok\" if " + std::string(raised) + " is None else \"raised\"") +
             ", " + library + ", " + judge + ")";
      break;
    case ReproCheck::Live::Message:
      call = "check(" + what + ", message_of(" + std::string(raised) + "), " + library + ", " + judge + ")";
      break;
    case ReproCheck::Live::ExceptionType:
      call = "check(" + what + ", exception_name(" + std::string(raised) + "), " +
             string_literal(exception_side(c.library_exception, c.library, lang), lang) + ", " +
             string_literal(exception_side(c.judge_exception, c.judge, lang), lang) + ")";
      break;
    case ReproCheck::Live::Recorded:
      call = "check_recorded(" + what + ", " + library + ", " + judge + ", " + string_literal(c.why_recorded, lang) + ")";
      break;
  }
  const std::string intro = cpp ? "  // The check: the first difference parity found, observed here.\n"
                                : "# The check: the first difference parity found, observed here.\n";
  return intro + (cpp ? "  " + call + ";\n" : call + "\n");
}

std::string_view check_finish(ReproLang lang) {
  return lang == ReproLang::Cpp ? "  return finish();\n" : "finish()\n";
}

}  // namespace parity::reports
