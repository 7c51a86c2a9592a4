// Role-keyed coverage: the events that happen to the tensors of one storage, each keyed by the role of the tensor
// it happened to, and the ordered pairs and triples of them that one case met. A bug that needs "retain_grad on a
// view, then a write to its base, then a backward" hides from a campaign that only ever met those three events on
// the base: situation_pairs() (judge/coverage.h) counts both alike, these keys tell them apart.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace parity::judge {

// What can happen to one tensor (all its views and aliases, one storage). The names are report keys: keep them.
#define PARITY_TENSOR_EVENTS(X)                                                                                  \
  X(RetainGrad, "retain_grad")                                                                                  \
  X(WriteViaView, "write_via_view")             /* in place through an autograd view of it, grad enabled */    \
  X(WriteOnTensor, "write_on_tensor")           /* in place on a value that is no view, grad enabled */         \
  X(WriteViaAlias, "write_via_alias")           /* in place through detach() or .data, any grad mode */        \
  X(WriteViaNogradView, "write_via_nograd_view") /* in place through a view made under no_grad */              \
  X(Saved, "saved")                             /* an op requiring grad saved it (or its result) */            \
  X(Backward, "backward")                       /* an ok backward whose graph holds it */

// The role of the tensor an event happened to: a view (of anything); otherwise what made it (a `.grad` or a
// gradient autograd.grad returned, a copy, a deep copy), otherwise a leaf or not. In a key, `view` is the first
// view the key names and `sibling` any other view of the storage, so a key never starts with `sibling`.
#define PARITY_TENSOR_ROLES(X) \
  X(Leaf, "leaf")              \
  X(Nonleaf, "nonleaf")        \
  X(View, "view")              \
  X(Sibling, "sibling")        \
  X(Grad, "grad")              \
  X(Copy, "copy")              \
  X(Deepcopy, "deepcopy")

#define PARITY_ROLE_ENUM_ENTRY(name, str) name,
enum class TensorEvent : std::uint8_t { PARITY_TENSOR_EVENTS(PARITY_ROLE_ENUM_ENTRY) };
enum class TensorRole : std::uint8_t { PARITY_TENSOR_ROLES(PARITY_ROLE_ENUM_ENTRY) };
#undef PARITY_ROLE_ENUM_ENTRY

const std::vector<std::string>& tensor_events();  // the names, in PARITY_TENSOR_EVENTS order

// One event on one tensor: `tensor` names the tensor (the value that first held it), so that two events on one
// view and two on sibling views differ. `role` is never Sibling: RoleCombinations decides that.
struct RoleEvent {
  TensorEvent event;
  TensorRole role;
  int tensor;
};

// The ordered pairs and triples of role events one case met on one storage, each once. Keys read
// "retain_grad@view+write_on_tensor@nonleaf+backward@view", events in the order they happened; an event repeated
// on the same tensor in the same role adds nothing.
class RoleCombinations {
 public:
  void add(int storage, RoleEvent e);
  std::vector<std::string> pairs() const;    // role_pairs() keys met, in that order
  std::vector<std::string> triples() const;  // role_triples() keys met, in that order

 private:
  struct Storage {
    int id;
    std::vector<RoleEvent> events;
  };
  std::vector<Storage> storages_;
  std::vector<std::uint32_t> pairs_, triples_;  // indices into role_pairs(), role_triples()
};

// Every key a case can report (the run.json tables' universe), and the goals among them that
// `--require-coverage` judges: the combinations that matter (a write to a storage between a retain_grad or a
// save and the backward that reads it, in each role that changes what autograd must do).
const std::vector<std::string>& role_pairs();
const std::vector<std::string>& role_triples();
const std::vector<std::string>& role_pair_goals();
const std::vector<std::string>& role_triple_goals();

}  // namespace parity::judge
