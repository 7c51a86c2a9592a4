#include "judge/compare.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>

#include "program/internal_assert.h"

namespace parity::judge {

using program::DType;
using program::join;
using program::Program;
using program::render_ints;
using program::render_number;
using program::spec;

namespace {

using Severity = Divergence::Severity;
using Kind = DivergenceKind;

std::string render(const std::vector<std::int64_t>& v) { return render_ints(v); }
std::string render(double v) { return render_number(v); }

std::string render(bool b) { return b ? "true" : "false"; }

std::string render_step(const StepObs& s) {
  switch (s.status) {
    case StepObs::Status::Ok: return "ok";
    case StepObs::Status::Skipped: return "skipped (an input was not produced)";
    case StepObs::Status::Error:
      return "error(" + std::string(to_string(s.category)) + "): " + s.message;
  }
  return "?";
}

// A raised step as its exception's class and message: "c10::IndexError: Dimension out of range ...".
std::string render_exception(const StepObs& s) {
  return (s.exception ? std::string(to_string(*s.exception)) : std::string("?")) + ": " + s.message;
}

std::string render_violations(const StepObs& s) {
  return s.schema_violations.empty() ? "conforms to its schema" : join(s.schema_violations, "; ");
}

std::string render_alias(const TensorObs& o) {
  if (o.alias_of == o.value) return "own storage";
  return "shares storage with v" + std::to_string(o.alias_of);
}

std::string render_identity(const TensorObs& o) {
  if (o.same_as == o.value) return "its own tensor";
  return "the same tensor as v" + std::to_string(o.same_as);
}

std::string render_grad_alias(const GradObs& g) {
  std::string s = g.alias_of < 0 ? "own storage" : "shares storage with v" + std::to_string(g.alias_of);
  return s + ", the .grad of v" + std::to_string(g.grad_alias_of);
}

std::string render_grad_identity(const GradObs& g) {
  std::string s = g.same_as < 0 ? "not a program value" : "the same tensor as v" + std::to_string(g.same_as);
  return s + ", replaced " + std::to_string(g.replaced) + (g.replaced == 1 ? " time" : " times");
}

std::string render_view(const TensorObs& o) {
  if (!o.is_view) return "not a view";
  if (o.base == kBaseNotAValue) return "a view of a tensor made inside an op";
  return "a view of v" + std::to_string(o.base);
}

std::string render_contiguity(const TensorObs& o) {
  return "contiguous=" + render(o.contiguous) + " channels_last=" + render(o.channels_last) +
         " channels_last_3d=" + render(o.channels_last_3d) +
         " non_overlapping_dense=" + render(o.non_overlapping_dense);
}

std::string render_ids(const std::vector<int>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::string("v") + std::to_string(ids[i]);
  return s + "]";
}

std::int64_t numel(const std::vector<std::int64_t>& sizes) {
  std::int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

// Strides that differ only where they cannot matter: in size-1 dims, or anywhere in an empty tensor.
bool strides_differ_insignificantly(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& a,
                                    const std::vector<std::int64_t>& b) {
  if (a.size() != b.size() || a.size() != sizes.size()) return false;
  if (numel(sizes) == 0) return true;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (a[i] != b[i] && sizes[i] != 1) return false;
  return true;
}

bool close(double a, double b, Tolerance t) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= t.atol + t.rtol * std::fabs(b);
}

// First element that differs beyond tolerance, or nullopt. A length mismatch differs at the shorter end.
std::optional<std::size_t> first_value_difference(const std::vector<double>& a, const std::vector<double>& b,
                                                  DType dtype) {
  Tolerance t = tolerance(dtype);
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!close(a[i], b[i], t)) return i;
  if (a.size() != b.size()) return n;
  return std::nullopt;
}

std::string render_element(const std::vector<double>& v, std::size_t i) {
  std::string at = i < v.size() ? render(v[i]) : std::string("(missing)");
  return "element " + std::to_string(i) + " of " + std::to_string(v.size()) + " = " + at;
}

// |a - b| <= tol for statistics that may have overflowed: a bound that is not finite says nothing, and a
// statistic that is not finite must be the same on both sides.
bool within(double a, double b, double tol) {
  if (!std::isfinite(tol)) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return a == b || (std::isnan(a) && std::isnan(b));
  return std::fabs(a - b) <= tol;
}

// How far past the tolerated spread of the checksum a difference must go to count (see summary_difference).
constexpr double kChecksumSigmas = 6;

// The first statistic by which two summaries of tensors with the same sizes show that their elements are not
// pairwise `close` under `t`, or nullopt.
//
// NaNs and infinities are compared exactly, as element-wise (NaN equals NaN, an infinity only itself): counts,
// and a hash of their places. The dtypes compared exactly (t zero) are compared by their bits' hash. For the
// others, element-wise closeness (|a_i - b_i| <= atol + rtol |b_i| =: t_i) bounds each statistic: min and max
// move by at most atol + rtol max|b|, the sum by at most Σ t_i = n atol + rtol Σ|b_i| (plus the rounding of two
// sums of n terms). These bounds are sound but grow with n, so one wrong element of a large tensor hides in the
// sum. The checksum finds it: with weights of pseudo-random sign, tolerated differences add up as a random walk
// whose spread is at most sqrt(Σ w_i² t_i²) <= 2 sqrt(2 (n atol² + rtol² Σ b_i²)), while one element wrong by d
// moves it by at least d (|w_i| >= 1). It is held to kChecksumSigmas times that spread: element-wise accepted
// differences pass it unless nearly every element differs by nearly its whole tolerance with signs that follow
// the weights' hash, and one element of n differing by more than about 17 sqrt(n) t is found (float32 near 1,
// n = 2^20: 0.2). A permutation moves the checksum by the weights' differences times the values'.
std::optional<std::string> summary_difference(const ValueSummary& a, const ValueSummary& b, Tolerance t) {
  if (a.numel != b.numel) return "element count";
  if (a.bits == b.bits) return std::nullopt;
  if (a.nan != b.nan) return "nan count";
  if (a.pos_inf != b.pos_inf) return "+inf count";
  if (a.neg_inf != b.neg_inf) return "-inf count";
  if (a.nonfinite_at != b.nonfinite_at) return "places of nan and inf";
  if (t.rtol == 0 && t.atol == 0) return "bits";
  const double n = static_cast<double>(a.numel - a.nan - a.pos_inf - a.neg_inf);
  const double magnitude = std::max(std::fabs(b.min), std::fabs(b.max));
  const double rounding = n * std::numeric_limits<double>::epsilon() * (a.abs_sum + b.abs_sum);
  if (!within(a.min, b.min, t.atol + t.rtol * magnitude)) return "min";
  if (!within(a.max, b.max, t.atol + t.rtol * magnitude)) return "max";
  if (!within(a.sum, b.sum, n * t.atol + t.rtol * b.abs_sum + rounding)) return "sum";
  const double spread = 2 * std::sqrt(2 * (n * t.atol * t.atol + t.rtol * t.rtol * b.sum_sq));
  if (!within(a.checksum, b.checksum, kChecksumSigmas * spread + 2 * rounding)) return "checksum";
  return std::nullopt;
}

std::string render_summary(const ValueSummary& s, const std::string& differs) {
  return differs + " differs: " + render(s);
}

// A side's values as a summary: its own, or, for a side that kept every value where the other summarised
// (traces of runs that kept different amounts), a summary made now by the same rule.
ValueSummary summary_of(const std::optional<ValueSummary>& summary, const std::vector<double>& values) {
  return summary ? *summary : summarise(values);
}

// Walks both traces in order; stops at the first Major difference and remembers the first Minor one.
class Comparer {
 public:
  std::optional<Divergence> result() const { return major_ ? major_ : minor_; }
  bool done() const { return major_.has_value(); }

  void emit(int step, int value, Kind kind, std::string impl, std::string oracle,
            Severity severity = Severity::Major) {
    Divergence d{step, value, kind, std::move(impl), std::move(oracle), severity, {}, {}};
    if (severity == Severity::Major) major_ = std::move(d);
    else if (!minor_) minor_ = std::move(d);
  }
  void emit(Divergence d) {
    if (d.severity == Severity::Major) major_ = std::move(d);
    else if (!minor_) minor_ = std::move(d);
  }

  void step(int index, const StepObs& a, const StepObs& b) {
    auto cat = [](const StepObs& s) {
      return s.status == StepObs::Status::Error ? std::optional<ErrorCategory>(s.category) : std::nullopt;
    };
    if (a.status != b.status) {
      Divergence d{index, -1, Kind::Status, render_step(a), render_step(b), Severity::Major, cat(a), cat(b)};
      return emit(std::move(d));
    }
    if (a.status == StepObs::Status::Error && a.category != b.category) {
      Divergence d{index, -1, Kind::ErrorCategory, render_step(a), render_step(b), Severity::Major, cat(a), cat(b)};
      return emit(std::move(d));
    }
    // What a caller catches is behaviour too (Python's IndexError against RuntimeError), where both sides name it.
    if (a.status == StepObs::Status::Error && a.exception && b.exception && *a.exception != *b.exception) {
      Divergence d{index, -1, Kind::ExceptionType, render_exception(a), render_exception(b), Severity::Major, cat(a), cat(b)};
      return emit(std::move(d));
    }
    // What a user reads is behaviour too: the same category in other words is a divergence of its own.
    // Normalised only when they differ: nearly every pair of messages is equal as it is.
    if (a.status == StepObs::Status::Error && a.message != b.message &&
        normalised_message(a.message) != normalised_message(b.message)) {
      Divergence d{index, -1, Kind::Message, render_step(a), render_step(b), Severity::Major, cat(a), cat(b)};
      return emit(std::move(d));
    }
    std::vector<int> ids_a, ids_b;
    for (const auto& o : a.observed) ids_a.push_back(o.value);
    for (const auto& o : b.observed) ids_b.push_back(o.value);
    std::sort(ids_a.begin(), ids_a.end());
    std::sort(ids_b.begin(), ids_b.end());
    if (ids_a != ids_b) return emit(index, -1, Kind::ObservedSet, render_ids(ids_a), render_ids(ids_b));
    // In the oracle's order; the impl's observation of the same value is found by id.
    for (std::size_t k = 0; k < b.observed.size() && !done(); ++k) {
      auto it = std::find_if(a.observed.begin(), a.observed.end(),
                             [&](const TensorObs& o) { return o.value == b.observed[k].value; });
      tensor(index, *it, b.observed[k]);
    }
    // Checked against the schema, not against the other side: a violation both backends share is still one.
    if (!done() && (a.schema_violations != b.schema_violations || !a.schema_violations.empty()))
      emit(index, -1, Kind::Schema, render_violations(a), render_violations(b));
  }

 private:
  void tensor(int step, const TensorObs& a, const TensorObs& b) {
    const int v = b.value;
    auto major = [&](Kind kind) { emit(step, v, kind, *observation_text(kind, a), *observation_text(kind, b)); };
    if (a.sizes != b.sizes) return major(Kind::Sizes);
    if (a.dtype != b.dtype) return major(Kind::DType);
    if (a.device != b.device) return major(Kind::Device);
    const bool empty = numel(b.sizes) == 0;
    if (a.strides != b.strides) {
      if (!strides_differ_insignificantly(b.sizes, a.strides, b.strides)) return major(Kind::Strides);
      emit(step, v, Kind::StridesSize1, render(a.strides), render(b.strides), Severity::Minor);
    }
    if (a.offset != b.offset) {
      if (!empty) return major(Kind::Offset);
      emit(step, v, Kind::Offset, std::to_string(a.offset), std::to_string(b.offset), Severity::Minor);
    }
    if (a.alias_of != b.alias_of) return major(Kind::Alias);
    if (a.same_as != b.same_as) return major(Kind::Identity);
    if (a.is_view != b.is_view || a.base != b.base) return major(Kind::View);
    if (a.version != b.version) return major(Kind::Version);
    if (a.requires_grad != b.requires_grad) return major(Kind::RequiresGrad);
    if (a.is_leaf != b.is_leaf) return major(Kind::IsLeaf);
    if (a.retains_grad != b.retains_grad) return major(Kind::RetainsGrad);
    if (a.grad_fn != b.grad_fn) return major(Kind::GradFn);
    if (a.contiguous != b.contiguous || a.channels_last != b.channels_last ||
        a.channels_last_3d != b.channels_last_3d || a.non_overlapping_dense != b.non_overlapping_dense)
      return major(Kind::Contiguity);
    if (a.values_defined && b.values_defined) {
      if (a.summary || b.summary) {
        const ValueSummary sa = summary_of(a.summary, a.values), sb = summary_of(b.summary, b.values);
        if (auto differs = summary_difference(sa, sb, tolerance(b.dtype)))
          return emit(step, v, Kind::Values, render_summary(sa, *differs), render_summary(sb, *differs));
      } else if (auto i = first_value_difference(a.values, b.values, b.dtype)) {
        return emit(step, v, Kind::Values, render_element(a.values, *i), render_element(b.values, *i));
      }
    }
    grad(step, v, a, b);
  }

  void grad(int step, int v, const TensorObs& ta, const TensorObs& tb) {
    auto major = [&](Kind kind) { emit(step, v, kind, *observation_text(kind, ta), *observation_text(kind, tb)); };
    const std::optional<GradObs>& a = ta.grad;
    const std::optional<GradObs>& b = tb.grad;
    if (a.has_value() != b.has_value()) return major(Kind::GradDefined);
    if (!a) return;
    if (a->sizes != b->sizes) return major(Kind::GradSizes);
    if (a->dtype != b->dtype) return major(Kind::GradDType);
    if (a->alias_of != b->alias_of || a->grad_alias_of != b->grad_alias_of) return major(Kind::GradAlias);
    if (a->same_as != b->same_as || a->replaced != b->replaced) return major(Kind::GradIdentity);
    if (a->version != b->version) return major(Kind::GradVersion);
    if (a->strides != b->strides) {
      if (!strides_differ_insignificantly(b->sizes, a->strides, b->strides)) return major(Kind::GradStrides);
      emit(step, v, Kind::GradStridesSize1, render(a->strides), render(b->strides), Severity::Minor);
    }
    // No values and no summary mean "not comparable" (gradients that flowed through uninitialised memory).
    auto comparable = [](const GradObs& g) { return !g.values.empty() || g.summary; };
    if (!comparable(*a) || !comparable(*b)) return;
    if (a->summary || b->summary) {
      const ValueSummary sa = summary_of(a->summary, a->values), sb = summary_of(b->summary, b->values);
      if (auto differs = summary_difference(sa, sb, tolerance(b->dtype)))
        return emit(step, v, Kind::GradValues, render_summary(sa, *differs), render_summary(sb, *differs));
    } else if (auto i = first_value_difference(a->values, b->values, b->dtype)) {
      return emit(step, v, Kind::GradValues, render_element(a->values, *i), render_element(b->values, *i));
    }
  }

  std::optional<Divergence> major_;
  std::optional<Divergence> minor_;
};

}  // namespace

// A message with what PyTorch itself varies from run to run taken out: addresses (0x followed by hex digits).
// LibTorch's backtraces are already gone (the oracle reads what_without_backtrace()).
std::string normalised_message(std::string_view m) {
  std::string out;
  out.reserve(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '0' && i + 2 < m.size() && m[i + 1] == 'x' && std::isxdigit(static_cast<unsigned char>(m[i + 2]))) {
      out += "0x<address>";
      i += 2;
      while (i + 1 < m.size() && std::isxdigit(static_cast<unsigned char>(m[i + 1]))) ++i;
      continue;
    }
    out += m[i];
  }
  return out;
}

std::optional<std::string> observation_text(DivergenceKind kind, const TensorObs& o) {
  const std::optional<GradObs>& g = o.grad;
  const std::string no_grad = "undefined";
  switch (kind) {
    case Kind::Sizes: return render(o.sizes);
    case Kind::DType: return std::string(to_string(o.dtype));
    case Kind::Device: return o.device;
    case Kind::Strides:
    case Kind::StridesSize1: return render(o.strides);
    case Kind::Offset: return std::to_string(o.offset);
    case Kind::Alias: return render_alias(o);
    case Kind::Identity: return render_identity(o);
    case Kind::View: return render_view(o);
    case Kind::Version: return std::to_string(o.version);
    case Kind::RequiresGrad: return render(o.requires_grad);
    case Kind::IsLeaf: return render(o.is_leaf);
    case Kind::RetainsGrad: return render(o.retains_grad);
    case Kind::GradFn: return o.grad_fn.empty() ? "none" : o.grad_fn;
    case Kind::Contiguity: return render_contiguity(o);
    case Kind::GradDefined: return g ? "defined" : no_grad;
    case Kind::GradSizes: return g ? render(g->sizes) : no_grad;
    case Kind::GradDType: return g ? std::string(to_string(g->dtype)) : no_grad;
    case Kind::GradAlias: return g ? render_grad_alias(*g) : no_grad;
    case Kind::GradIdentity: return g ? render_grad_identity(*g) : no_grad;
    case Kind::GradVersion: return g ? std::to_string(g->version) : no_grad;
    case Kind::GradStrides:
    case Kind::GradStridesSize1: return g ? render(g->strides) : no_grad;
    case Kind::StepCount:
    case Kind::Status:
    case Kind::ErrorCategory:
    case Kind::ExceptionType:
    case Kind::Message:
    case Kind::ObservedSet:
    case Kind::Values:
    case Kind::GradValues:
    case Kind::Schema:
    case Kind::Crash:
    case Kind::Protocol:
    case Kind::Timeout:
    case Kind::OutOfMemory: return std::nullopt;
  }
  PARITY_HARNESS_UNREACHABLE("no case for this divergence kind");
}

Tolerance tolerance(DType d) {
  switch (d) {
    case DType::Float32: return {1.3e-6, 1e-5};
    case DType::Float64: return {1e-7, 1e-7};
    // PyTorch's own test tolerances for the 16-bit types (torch.testing): a few units in the last place.
    case DType::Float16: return {1e-3, 1e-5};
    case DType::BFloat16: return {1.6e-2, 1e-5};
    case DType::Int64:
    case DType::Int32:
    case DType::Bool: return {0.0, 0.0};
  }
  return {0.0, 0.0};
}

std::string_view to_string(Divergence::Severity s) { return s == Severity::Major ? "major" : "minor"; }

std::optional<Divergence> compare(const Trace& impl, const Trace& oracle) {
  Comparer c;
  const std::size_t n = std::min(impl.steps.size(), oracle.steps.size());
  if (impl.steps.size() != oracle.steps.size()) {
    c.emit(static_cast<int>(n), -1, Kind::StepCount, std::to_string(impl.steps.size()) + " steps",
           std::to_string(oracle.steps.size()) + " steps");
    return c.result();
  }
  for (std::size_t i = 0; i < n && !c.done(); ++i) c.step(static_cast<int>(i), impl.steps[i], oracle.steps[i]);
  return c.result();
}

Signature signature(const Program& program, const Divergence& d) {
  Signature sig{d.step >= 0 && static_cast<std::size_t>(d.step) < program.steps.size()
                    ? std::string(spec(program.steps[d.step].op).name)
                    : std::string(Signature::kProgramOp),
                d.kind,
                {}};
  switch (d.kind) {
    case Kind::Status:
    case Kind::ExceptionType:
    case Kind::Message:
      if (d.impl_category) sig.detail = *d.impl_category;
      else if (d.oracle_category) sig.detail = *d.oracle_category;
      break;
    case Kind::ErrorCategory: sig.detail = SideCategories{d.impl_category, d.oracle_category}; break;
    case Kind::Crash:
      if (!d.signal.empty()) sig.detail = Signal{d.signal};
      break;
    case Kind::GradFn: {
      // Both refused to give a grad_fn: what differs is why, as for a step's error.
      auto impl = raised_marker_category(d.impl), oracle = raised_marker_category(d.oracle);
      if (impl && oracle) sig.detail = SideCategories{impl, oracle};
      break;
    }
    case Kind::StepCount:
    case Kind::ObservedSet:
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
    case Kind::Contiguity:
    case Kind::Values:
    case Kind::GradDefined:
    case Kind::GradSizes:
    case Kind::GradDType:
    case Kind::GradAlias:
    case Kind::GradIdentity:
    case Kind::GradVersion:
    case Kind::GradStrides:
    case Kind::GradStridesSize1:
    case Kind::GradValues:
    case Kind::Schema:
    case Kind::Protocol:
    case Kind::Timeout:
    case Kind::OutOfMemory: break;
  }
  return sig;
}

}  // namespace parity::judge
