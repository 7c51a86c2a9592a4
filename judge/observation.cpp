#include "judge/observation.h"



namespace parity::judge {

namespace {

struct Names {
  std::string_view json, words;
};
constexpr Names kNames[] = {
#define PARITY_OBSERVATION_NAMES(name, json, words) {json, words},
    PARITY_OBSERVATIONS(PARITY_OBSERVATION_NAMES)
#undef PARITY_OBSERVATION_NAMES
};

void forget(GradObs& g, const Observations& c) {
  if (!c.has(Observation::Values)) g.values.clear(), g.summary.reset();
  if (!c.has(Observation::Layout)) g.strides.clear();
  if (!c.has(Observation::Storage)) g.alias_of = g.grad_alias_of = -1;
  if (!c.has(Observation::Identity)) g.same_as = -1, g.replaced = 0;
  if (!c.has(Observation::Version)) g.version = 0;
}

void forget(TensorObs& t, const Observations& c) {
  if (!c.has(Observation::Values)) t.values.clear(), t.summary.reset();
  if (!c.has(Observation::Layout)) {
    t.strides.clear();
    t.offset = 0;
    t.contiguous = t.channels_last = t.channels_last_3d = t.non_overlapping_dense = false;
  }
  if (!c.has(Observation::Storage)) t.alias_of = -1;
  if (!c.has(Observation::Identity)) t.same_as = -1;
  if (!c.has(Observation::Views)) t.is_view = false, t.base = -1;
  if (!c.has(Observation::Version)) t.version = 0;
  if (!c.has(Observation::Autograd)) t.requires_grad = t.retains_grad = false, t.is_leaf = true;
  if (!c.has(Observation::GradFn)) t.grad_fn.clear();
  if (!c.has(Observation::Grad)) t.grad.reset();
  if (t.grad) forget(*t.grad, c);
}

}  // namespace

std::string_view to_string(Observation o) { return kNames[static_cast<std::size_t>(o)].json; }
std::string_view describe(Observation o) { return kNames[static_cast<std::size_t>(o)].words; }

std::optional<Observation> parse_observation(std::string_view s) {
  for (std::size_t i = 0; i < kObservationCount; ++i)
    if (kNames[i].json == s) return static_cast<Observation>(i);
  return std::nullopt;
}

std::vector<Observation> Observations::missing() const {
  std::vector<Observation> out;
  for (std::size_t i = 0; i < kObservationCount; ++i)
    if (!bits_.test(i)) out.push_back(static_cast<Observation>(i));
  return out;
}

void forget_unobserved(Trace& trace, const Observations& compared) {
  if (compared.all()) return;
  for (StepObs& s : trace.steps) {
    // Without categories a message means nothing to compare: both go together.
    if (!compared.has(Observation::Errors)) s.category = ErrorCategory::Unclassified;
    if (!compared.has(Observation::Messages) || !compared.has(Observation::Errors)) s.message.clear();
    for (TensorObs& t : s.observed) forget(t, compared);
  }
}

std::string not_compared_sentence(const Observations& compared) {
  std::string out;
  for (Observation o : compared.missing()) out += (out.empty() ? "not compared: " : ", ") + std::string(describe(o));
  return out;
}

}  // namespace parity::judge
