// Builds one program step by step, keeping the state tracker (generators/program_state.h) in sync so that every
// choice sees the values' Meta. program_gen.cpp draws random steps through it; the recipes (generators/recipes/)
// build their situations from its helpers: emit, fresh, rg_leaf, view_of, write, reduce, backward.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "generators/program_gen.h"
#include "generators/program_state.h"
#include "generators/rng.h"
#include "program/program.h"

namespace parity::generators {

// Adjusts the attributes emit() drew for a step.
using Tweak = std::function<void(program::Attrs&)>;

class StepBuilder {
 public:
  StepBuilder(Rng& rng, const GenConfig& cfg, int length) : rng_(rng), cfg_(cfg), length_(length) {}

  // Which ops random steps may use in this program (all, or a swarm's half: GenConfig::swarm_share), then which of
  // `recipes` recipes may run, returned: drawn in that order, before any step.
  std::vector<bool> draw_swarm(std::size_t recipes);

  int size() const { return state_.size(); }
  int length() const { return length_; }
  Rng& rng() { return rng_; }
  const GenConfig& config() const { return cfg_; }
  const ProgramState& state() const { return state_; }
  const program::Program& program() const { return prog_; }
  program::Program take_program() { return std::move(prog_); }

  bool room() const;  // whether the program may take another step
  // Appends `step` as it is (the tracker judges it); returns its value id.
  int append(const program::Step& step);
  // Whether `step`, appended now, is one the generator itself could make: within the dims limit, defined in
  // LibTorch, and, where it is expected to succeed, no false alarm from its operands' rounding. A mutation
  // (generators/mutate.h) replays a program's later steps only where each still is.
  bool admits(const program::Step& step) const;
  std::vector<int> live() const;  // the value ids a step may still use
  const program::Meta& meta(int id) const;

  // One step of a random op of the table, valid or (GenConfig::invalid_share) deliberately not.
  void random_step();

  // Appends a well-typed step of `op` on `inputs`, with attributes drawn then adjusted by `tweak`; -1 when no
  // room is left or no attempt gives a step expected to succeed (`allow_raise`: well-typed is enough).
  int emit(program::OpId op, std::vector<int> inputs, const Tweak& tweak = {}, bool grad = true,
           bool allow_raise = false);

  program::DType floating();  // a floating dtype, float32 most often

  // A fresh leaf with these sizes and some layout.
  int fresh(const std::vector<std::int64_t>& sizes, program::DType dtype, bool rg);

  // A floating leaf requiring grad: an existing one now and then, else a new one of any layout.
  int rg_leaf();

  // A view of `x` (or `x` itself when no view op fits it).
  // `single_output`: not unbind/split/chunk, whose outputs refuse in-place writes with grad on.
  int view_of(int x, bool grad = true, bool single_output = false);

  // An in-place write on `x`; overlapping memory only takes fill_/zero_.
  int write(int x, bool grad, bool allow_raise = false);

  // A one-element result of y for a backward: its sum or mean, after a conversion to float32 for a dtype the
  // reductions are not generated on (kReducibleTypes).
  int reduce(int y);

  // A backward from s, `times` times over a graph retained in between. Now and then it is one backward from two
  // roots: s twice, or s and another reduction of what s reduced (the roots share a graph, so a node both reach
  // runs once with the sum of what arrives).
  void backward(int s, int times);

  // Operands for `op` with x where it is differentiable (operand 0, or 1 when operand 0 must be of another dtype,
  // where's condition) and fresh tensors elsewhere: of x's shape (transposed for mm's second) and x's dtype (now
  // and then another floating one) or bool (a mask, a condition), or arange(x.size(0)) (an index, every entry
  // in range), the first combination the shape rule accepts. nullopt when none does or a tensor could not be
  // made.
  std::optional<std::vector<int>> operands_around(program::OpId op, int x);

 private:
  // Cheap pre-filter: an operand that cannot make `op` well-typed is not worth a try.
  bool fits(program::OpId op, int slot, int id) const;

  // A step that turns last-bit differences of an operand into differences a tolerance cannot absorb, beyond what
  // the op table's amplifies_rounding says of an op: truncation to an integer dtype (to, copy_ into an integer
  // tensor); a float64 result of a rounded float32 operand (float32's error judged at float64's tolerance); and
  // division by a value that may have lost its leading digits to cancellation (1 - tanh(x)^2 near saturation).
  // Such cases are false alarms, not findings.
  bool loses_rounding(const program::Step& s) const;

  // Whether value `id` was computed, at any depth, by an op whose float32 result may differ in its last bits.
  // Kept per value as steps are appended; a write into a value (exp_(v), v.add_(w) with a rounded w) marks the
  // value written too.
  bool carries_rounding(int id) const;
  // Whether a gradient through value `id` reaches a value requiring grad of a more precise floating dtype than one
  // it is computed in on the way (a float64 leaf's gradient through to(float32), or through a float32 in-place op
  // of a float64 operand). Kept as carries_rounding is.
  bool narrows_gradient(int id) const;
  // Whether value `id` may hold a value past the small range scalars are drawn from (an edge value: 2^31, 65504),
  // through a scalar or a literal of its history. Kept as carries_rounding is.
  bool holds_large(int id) const;
  // Whether values a and b share a value of their history (either counts as its own).
  bool share_history(int a, int b) const;

  void track_rounding(const program::Step& s, bool expected_ok);

  static bool rounds(program::OpId op);

  // Whether value `id`'s history holds only ops whose derivatives impl records as LibTorch does under create_graph
  // (program::double_backward), so that a create_graph backward from it, and anything derived from what that
  // backward makes, is worth comparing. Kept per value as steps are appended, over the memory rounding tracks.
  bool twice(int id) const;

  void track_double_backward(const program::Step& s);

  double operand_weight(program::OpId op, int slot, int id) const;

  std::optional<std::vector<int>> pick_operands(program::OpId op, bool want_valid);

  // When no live values complete a multi-operand step (an index and values of matching shapes, a mask), its
  // other operands are made for it around a live operand 0 that fits (operands_around).
  std::optional<std::vector<int>> operands_for_first(program::OpId op);

  std::vector<program::Meta> metas(const std::vector<int>& inputs) const;

  std::optional<program::Step> make_step(program::OpId op, bool want_valid);

  int second_root(int s);

  Rng& rng_;
  const GenConfig& cfg_;
  int length_;
  ProgramState state_;
  program::Program prog_;
  std::vector<bool> rounding_;  // per value: carries_rounding
  std::vector<bool> narrowing_;  // per value: narrows_gradient
  std::vector<bool> large_;      // per value: holds_large
  std::vector<int> memory_;     // per value: the value whose memory it lives in (rounding marks)
  std::vector<bool> twice_;     // per value: twice()
  std::set<int> untwice_grads_;  // tensors (ValueInfo::tensor) whose .grad was assigned a value that is not twice()
  std::vector<bool> op_enabled_;  // per OpId: random steps may use it (swarm testing)
};

}  // namespace parity::generators
