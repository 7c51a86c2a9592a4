// Properties state a predicate on a Trace; this header runs a program on LibTorch and on impl and checks the
// predicate on each. A predicate that fails on LibTorch is a wrong property (LibTorch decides every semantic),
// one that fails on impl is an impl bug: the failure message says which, first thing.
//
// Budget: RapidCheck's default of 100 cases per property keeps CI within minutes on 2 cores. Local campaigns
// raise it through RapidCheck's environment variable, e.g.
//   RC_PARAMS="max_success=5000 max_size=100" ./parity_property_tests
//   RC_PARAMS="seed=1234 verbose_progress=1" ./parity_property_tests --gtest_filter='Saved*'
// (reproduce a failure with the `reproduce=` string RapidCheck prints).
#pragma once
#include <rapidcheck.h>

#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "generators/layout_gen.h"
#include "generators/program_text.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "oracle/torch_backend.h"
#include "program/program_builder.h"

namespace parity::properties {

using judge::StepObs;
using judge::TensorObs;
using judge::Trace;
using program::DType;
using program::MemoryFormat;
using program::OpId;
using program::Program;

inline judge::Backend& torch_backend() {
  static std::unique_ptr<judge::Backend> b = oracle::make_torch_backend();
  return *b;
}

// nullptr while impl has no backend: properties then hold LibTorch only (said once on stderr).
inline judge::Backend* impl_backend() {
  static std::unique_ptr<judge::Backend> b = [] {
    auto made = impl_backend::make_impl_backend();
    if (!made) std::cerr << "[parity] impl backend not available: properties are checked on LibTorch only\n";
    return made;
  }();
  return b.get();
}

// ---- writing predicates ----------------------------------------------------------------------------------

// Concatenates anything streamable, vectors included: messages stay one expression.
template <class T>
void put(std::ostream& os, const T& v) { os << v; }
template <class T>
void put(std::ostream& os, const std::vector<T>& v) {
  os << '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) os << ", ";
    put(os, v[i]);
  }
  os << ']';
}
inline void put(std::ostream& os, bool b) { os << (b ? "true" : "false"); }
template <class... Ts>
std::string cat(const Ts&... parts) {
  std::ostringstream os;
  (put(os, parts), ...);
  return os.str();
}

// Collects the first violated expectation of a predicate (later ones are usually consequences of it).
class Expectations {
 public:
  bool expect(bool ok, const std::string& what) {
    if (!ok && message_.empty()) message_ = what;
    return ok;
  }
  template <class... Ts>
  bool expect(bool ok, const Ts&... what) {
    if (!ok && message_.empty()) message_ = cat(what...);
    return ok;
  }
  bool failed() const { return !message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

// The observation of `value` recorded at step `step` (nullptr when that step did not observe it).
inline const TensorObs* obs(const Trace& t, int step, int value) {
  if (step < 0 || static_cast<std::size_t>(step) >= t.steps.size()) return nullptr;
  for (const auto& o : t.steps[static_cast<std::size_t>(step)].observed)
    if (o.value == value) return &o;
  return nullptr;
}

inline std::string outcome(const StepObs& s) {
  if (s.status == StepObs::Status::Ok) return "ok";
  return cat(judge::to_string(s.status), " ", judge::to_string(s.category), ": ",
             s.message.substr(0, s.message.find('\n')));
}

// Requires every step in [first, last] to have succeeded.
inline bool steps_ok(Expectations& v, const Trace& t, int first, int last) {
  for (int i = first; i <= last && i < static_cast<int>(t.steps.size()); ++i)
    if (!v.expect(t.steps[static_cast<std::size_t>(i)].status == StepObs::Status::Ok, "step ", i,
                  " should succeed, got ", outcome(t.steps[static_cast<std::size_t>(i)])))
      return false;
  return true;
}

inline std::string render(const TensorObs& o) {
  return cat("v", o.value, " sizes=", o.sizes, " strides=", o.strides, " offset=", o.offset, " dtype=",
             program::to_string(o.dtype), " alias_of=", o.alias_of, " version=", o.version, " rg=", o.requires_grad,
             " leaf=", o.is_leaf, " grad_fn=", o.grad_fn.empty() ? "-" : o.grad_fn,
             o.grad ? cat(" grad{strides=", o.grad->strides, " values=", o.grad->values, "}") : std::string(),
             " values=", o.values);
}

// Each step's outcome and what it observed of its own value (after a mutation: of every value).
inline std::string render(const Trace& t) {
  std::ostringstream os;
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    os << "  [" << i << "] " << outcome(t.steps[i]) << "\n";
    for (const auto& o : t.steps[i].observed) os << "      " << render(o) << "\n";
  }
  return os.str();
}

// ---- checking on both backends -------------------------------------------------------------------------

// A predicate states its expectations of one backend's trace of the program.
using Predicate = std::function<void(const Trace&, Expectations&)>;

inline void check_on_both(const Program& p, const Predicate& predicate) {
  struct Side {
    judge::Backend* backend;
    const char* blame;
  };
  const Side sides[] = {{&torch_backend(), "WRONG PROPERTY (fails on LibTorch): "},
                        {impl_backend(), "impl violates property: "}};
  for (const Side& side : sides) {
    if (!side.backend) continue;
    Trace t = judge::run(*side.backend, p);
    Expectations v;
    predicate(t, v);
    if (v.failed())
      RC_FAIL(cat(side.blame, v.message(), "\nprogram:\n", generators::describe(p), side.backend->name(),
                  " trace:\n", render(t)));
  }
}

// ---- building small programs by hand ------------------------------------------------------------------

// Programs are built with program::ProgramBuilder; a generated layout becomes a leaf through this.
using program::ProgramBuilder;

// A fresh tensor of seeded values laid out as `l`.
inline int add_leaf(ProgramBuilder& b, const generators::LayoutSpec& l, DType dtype, bool requires_grad,
                    std::uint64_t seed = 1) {
  return b.rand_strided(l.sizes, l.strides, l.offset, dtype, requires_grad, seed);
}

// ---- generators shared by the property files ------------------------------------------------------------

inline rc::Gen<DType> floating_dtypes() { return rc::gen::element(DType::Float32, DType::Float64); }
inline rc::Gen<DType> any_dtype() {
  return rc::gen::weightedElement<DType>({{5, DType::Float32}, {2, DType::Float64}, {2, DType::Int64}, {1, DType::Bool}, {1, DType::Int32},
                                                   {1, DType::Float16}, {1, DType::BFloat16}});
}
inline rc::Gen<std::uint64_t> seeds() { return rc::gen::inRange<std::uint64_t>(0, 1u << 30); }

// Memory formats valid for a tensor of `ndim` dims (preserve included when asked).
inline std::vector<MemoryFormat> formats_for(std::size_t ndim, bool with_preserve) {
  std::vector<MemoryFormat> f = {MemoryFormat::Contiguous};
  if (with_preserve) f.push_back(MemoryFormat::Preserve);
  if (ndim == 4) f.push_back(MemoryFormat::ChannelsLast);
  if (ndim == 5) f.push_back(MemoryFormat::ChannelsLast3d);
  return f;
}

inline bool overlapping(const generators::LayoutSpec& l) { return generators::has_internal_overlap(l.sizes, l.strides); }

}  // namespace parity::properties

