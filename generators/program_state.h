// What the generator knows about the values of a program being built: each value's Meta from the op table's
// shape rule, plus the autograd facts that decide whether a well-typed step still raises (in-place on a leaf
// requiring grad, on a view of one, detach_ of a view...). Generation, shrinking and the generator's tests
// all replay programs through this one tracker, so they agree on which steps are expected to succeed.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "program/program.h"

namespace parity::generators {

struct ValueInfo {
  std::optional<program::Meta> meta;  // nullopt: no value to use (the op returns none, or the step raises)
  bool leaf = true;                   // is_leaf as PyTorch reports it
  bool view = false;                  // an autograd view: in-place on it rewrites its base's history
  int base = -1;                      // for a view, the value it views (never itself a view)
  bool nograd_view = false;           // view made under no_grad of a tensor requiring grad
  bool multi_output_view = false;     // (a view of) an output of unbind/split/chunk made with grad on
  bool overlapping = false;           // elements share memory: in-place arithmetic raises (zero strides) or is
                                      // undefined (other overlap, which LibTorch does not detect): avoided
  std::int64_t storage_numel = 0;     // a lower bound of the element count of the storage behind it
  bool retains_grad = false;          // retain_grad() was called on it (a non-leaf)
  bool has_grad = false;              // .grad is (probably) defined: a backward ran since it could receive one,
                                      // or one was assigned. A guess that only steers: `grad` reads either way
  bool grad_has_history = false;      // that .grad requires grad: a create_graph backward made or summed it (its
                                      // formulas read tensors requiring grad, taken as so), or it was assigned one
  int tensor = -1;                    // the first value id that is this tensor object (in-place results share it)
  bool saved_mask = false;            // a masked_fill requiring grad saved it as its mask (set_data on it then is
                                      // undefined in LibTorch 1.13: see ProgramState::infer)
  program::Device device = program::Device::CPU;  // where the tensor lives
  std::int64_t index_below = -1;      // every entry is known to lie in [0, index_below) (an arange, or a view of
                                      // one nothing wrote since); -1: unknown
  bool contents_unknown = false;      // computed from contents no program fixes (empty, randn_like's samples):
                                      // the backends hold different ones
  bool unsafe_output = false;         // an output of unsafe_split/unsafe_chunk other than the first, or a view of
                                      // one
};

struct StepInfo {
  bool inputs_ok = false;  // right number of inputs, each an earlier value that exists
  bool table_ok = false;   // the op table's rule accepts operands and attributes
  bool raises = false;     // well-typed but known to raise at run time (autograd rules the table does not hold)
  bool undefined = false;  // LibTorch's behaviour is undefined for these operands (OpSpec::undefined): never made
  bool expected_ok() const { return inputs_ok && table_ok && !raises; }
  // A deliberately ill-typed step: its inputs exist but the table's rule rejects it.
  bool ill_typed() const { return inputs_ok && !table_ok; }
  bool operator==(const StepInfo&) const = default;
};

class ProgramState {
 public:
  // What appending `step` would give, without appending it.
  StepInfo check(const program::Step& step) const;
  StepInfo append(const program::Step& step);
  const std::vector<ValueInfo>& values() const { return values_; }
  const ValueInfo& value(int id) const { return values_[static_cast<std::size_t>(id)]; }
  int size() const { return static_cast<int>(values_.size()); }
  bool live(int id) const { return id >= 0 && id < size() && value(id).meta.has_value(); }

 private:
  std::optional<program::Meta> infer(const program::Step& step, StepInfo& info) const;
  bool raises(const program::Step& step) const;
  bool unknown_contents(const program::Step& step, std::size_t from) const;
  void forget_entries(bool written_unknown);
  void note_grads(const program::Step& step);
  void take_data(const program::Step& step);
  std::vector<ValueInfo> values_;
  std::set<std::int64_t> used_memos_;   // deepcopy memos some ok step used
  std::set<std::int64_t> stale_memos_;  // ... before a set_data: using them again is undefined (infer)
};

// Replays a whole program.
std::vector<StepInfo> analyze(const program::Program&);

// Structural validity: every step's op has its arity of inputs, each an earlier step that returns a value
// (backward and retain_grad return none). `why` gets the first problem.
bool well_formed(const program::Program&, std::string* why = nullptr);

}  // namespace parity::generators
