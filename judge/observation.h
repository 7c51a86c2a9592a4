// What a backend can be asked about a value, in the groups a protocol backend declares (docs/backend-protocol.md,
// `observations` of its handshake). What either side of a comparison does not provide is not compared: both
// traces forget it before judge::compare walks them, and the records say what was left out.
#pragma once
#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/trace.h"

namespace parity::judge {

#define PARITY_OBSERVATIONS(X)                                                                         \
  X(Values, "values", "values")                       /* elements, and .grad's */                      \
  X(Layout, "layout", "strides and offsets")          /* strides, offset, contiguity (sizes always) */ \
  X(Storage, "storage", "shared storage")             /* alias classes */                              \
  X(Identity, "identity", "tensor identity")          /* is_same */                                    \
  X(Views, "views", "view bases")                     /* _is_view, _base */                            \
  X(Version, "version", "version counters")                                                            \
  X(Autograd, "autograd", "requires_grad, is_leaf and retains_grad")                                   \
  X(GradFn, "grad_fn", "grad_fn names")                                                                \
  X(Grad, "grad", ".grad")                            /* the gradient, its identity and aliasing */    \
  X(Errors, "errors", "error categories")                                                              \
  X(Messages, "messages", "error messages")           /* within a category */

enum class Observation {
#define PARITY_OBSERVATION_ENUM(name, json, words) name,
  PARITY_OBSERVATIONS(PARITY_OBSERVATION_ENUM)
#undef PARITY_OBSERVATION_ENUM
};
inline constexpr std::size_t kObservationCount = 0
#define PARITY_OBSERVATION_COUNT(name, json, words) +1
    PARITY_OBSERVATIONS(PARITY_OBSERVATION_COUNT)
#undef PARITY_OBSERVATION_COUNT
    ;

std::string_view to_string(Observation);  // the handshake's and run.json's spelling
std::string_view describe(Observation);   // for a person: "version counters"
std::optional<Observation> parse_observation(std::string_view);

// A set of observations; every one by default (the in-process backends provide them all).
class Observations {
 public:
  Observations() { bits_.set(); }
  static Observations none() { return Observations(std::bitset<kObservationCount>{}); }
  bool has(Observation o) const { return bits_.test(static_cast<std::size_t>(o)); }
  void add(Observation o) { bits_.set(static_cast<std::size_t>(o)); }
  bool all() const { return bits_.all(); }
  Observations operator&(const Observations& other) const { return Observations(bits_ & other.bits_); }
  bool operator==(const Observations&) const = default;
  // The ones left out, in table order.
  std::vector<Observation> missing() const;

 private:
  explicit Observations(std::bitset<kObservationCount> b) : bits_(b) {}
  std::bitset<kObservationCount> bits_;
};

// Clears from `trace` every field `compared` leaves out, to its default, so that compare() finds no difference
// there.
void forget_unobserved(Trace& trace, const Observations& compared);

// "not compared: version counters, grad_fn names"; empty when everything is compared.
std::string not_compared_sentence(const Observations& compared);

}  // namespace parity::judge
