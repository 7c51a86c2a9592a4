// The differential suite: random programs (generators::programs) run on impl and on LibTorch must leave traces
// compare() finds no difference in. A failure names the first divergence and its signature, and RapidCheck
// shrinks the program to a minimal one before reporting it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "generators/program_gen.h"
#include "judge/compare.h"
#include "oracle/torch_backend.h"
#include "properties/on_both_backends.h"
#include "reports/build_info.h"
#include "reports/known_divergences.h"

namespace parity::properties {
namespace {

std::string severity(const judge::Divergence& d) {
  return d.severity == judge::Divergence::Severity::Minor ? "minor" : "major";
}

// The reviewed ledger: a divergence it explains (with a reason) is tagged as expected, as `parity fuzz` does.
const reports::KnownDivergences& known() {
  static const reports::KnownDivergences k = reports::KnownDivergences::load(reports::default_known_divergences_path());
  return k;
}

void impl_matches_libtorch() {
  const Program p = *generators::programs();
  std::set<std::string> kinds;
  bool backward = false, error = false;
  for (const auto& s : p.steps) {
    const auto& op = program::spec(s.op);
    backward = backward || s.op == OpId::Backward;
    switch (op.kind) {
      case program::OpKind::View: kinds.insert("view"); break;
      case program::OpKind::InPlace: kinds.insert("in-place"); break;
      case program::OpKind::Copy: kinds.insert("copy"); break;
      case program::OpKind::Factory:
      case program::OpKind::Arithmetic:
      case program::OpKind::Reduction:
      case program::OpKind::Autograd: break;
    }
  }
  const Trace oracle = judge::run(torch_backend(), p);
  for (const auto& s : oracle.steps) error = error || s.status == StepObs::Status::Error;
  RC_CLASSIFY(backward, "backward");
  RC_CLASSIFY(error, "a step raises on LibTorch");
  RC_CLASSIFY(kinds.count("view") && kinds.count("in-place"), "views and in-place");
  const int bucket = static_cast<int>(p.steps.size()) / 5 * 5;
  RC_TAG(cat(bucket, "-", bucket + 4, " steps"));

  const Trace impl = judge::run(*impl_backend(), p);
  if (auto d = judge::compare(impl, oracle)) {
    const judge::Signature sig = judge::signature(p, *d);
    if (known().match(sig, oracle::torch_version(), reports::today_utc())) {
      RC_TAG(cat("expected divergence: ", sig.to_string()));
      return;
    }
    RC_FAIL(cat("impl diverges from LibTorch: ", sig.to_string(), " (", severity(*d), ") at step ",
                d->step, d->value >= 0 ? cat(", value v", d->value) : std::string(), "\n  impl:    ", d->impl,
                "\n  libtorch: ", d->oracle, "\nprogram:\n", generators::describe(p), "libtorch trace:\n",
                render(oracle), "impl trace:\n", render(impl)));
  }
}

TEST(DifferentialProperties, ImplMatchesLibTorch) {
  if (!impl_backend()) GTEST_SKIP() << "impl backend not available (impl_backend::make_impl_backend() returned nullptr)";
  // RC_GTEST_PROP's own expansion, after the skip: a property cannot skip itself.
  rc::detail::checkGTest(&impl_matches_libtorch);
}

}  // namespace
}  // namespace parity::properties
