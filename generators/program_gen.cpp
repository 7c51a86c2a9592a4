#include "generators/program_gen.h"

#include <algorithm>
#include <array>
#include <functional>
#include <set>

#include "generators/attr_gen.h"
#include "generators/layout_gen.h"
#include "generators/program_state.h"
#include "generators/rng.h"
#include "generators/shrink.h"
#include "program/json.h"

namespace parity::generators {

using program::Attrs;
using program::DType;
using program::Meta;
using program::OpId;
using program::OpKind;
using program::Program;
using program::Step;

namespace {

using Tweak = std::function<void(Attrs&)>;

// The ops of the table with a trait, in table order.
template <typename Pred>
std::vector<OpId> ops_where(Pred pred) {
  std::vector<OpId> out;
  for (const program::OpSpec& op : program::op_table())
    if (!op.device_only && pred(op)) out.push_back(op.id);
  return out;
}

// Views that are always views (reshape may copy; expand's elements overlap): the ones a write can go through.
const std::vector<OpId>& view_ops() {
  static const auto ops = ops_where([](const program::OpSpec& op) { return op.result == program::ResultIs::View; });
  return ops;
}
// In-place writes of a scalar (add_(2), mul_(3), fill_, zero_): what the recipes write through views and leaves.
const std::vector<OpId>& scalar_writes() {
  static const auto ops = ops_where([](const program::OpSpec& op) { return op.writes_scalar(); });
  return ops;
}
// One-operand ops whose derivative reads `saves` (only arithmetic saves anything), out of place or in place.
std::vector<OpId> unary_saving(program::Saves saves, bool inplace) {
  return ops_where([=](const program::OpSpec& op) {
    return op.arity == 1 && op.saves == saves && op.is_inplace() == inplace;
  });
}

bool is_reduction_or_saver(const program::OpSpec& op) {
  return !op.is_inplace() && (op.kind == OpKind::Reduction || op.saves != program::Saves::Nothing);
}

// Builds one program step by step, keeping the tracker in sync so that every choice sees the values' Meta.
class Builder {
 public:
  Builder(Rng& rng, const GenConfig& cfg, int length) : rng_(rng), cfg_(cfg), length_(length) {}

  Program build() {
    draw_swarm();
    while (room()) {
      if (state_.size() > 0 && length_ - state_.size() >= 4 && rng_.chance(0.3)) recipe();
      else random_step();
    }
    return std::move(prog_);
  }

 private:
  bool room() const { return state_.size() < length_; }

  static constexpr std::size_t kRecipes = 13;

  // Which ops random steps may use and which recipes may run in this program (all, or a swarm's half).
  void draw_swarm() {
    const auto& table = program::op_table();
    op_enabled_.assign(table.size(), true);
    recipe_enabled_.fill(true);
    if (!rng_.chance(cfg_.swarm_share)) return;
    for (const program::OpSpec& op : table)
      if (op.kind != OpKind::Factory && !op.runs_backward && (!op.device_only || cfg_.cuda) &&
          rng_.chance(0.5))
        op_enabled_[static_cast<std::size_t>(op.id)] = false;
    for (bool& on : recipe_enabled_) on = rng_.chance(0.5);
  }

  int append(const Step& step) {
    Step s = step;
    // A create_graph backward only through graphs whose derivatives impl records as LibTorch does.
    if (s.attrs.create_graph && !std::all_of(s.inputs.begin(), s.inputs.end(), [&](int in) { return twice(in); }))
      s.attrs.create_graph = false;
    prog_.steps.push_back(s);
    const bool ok = state_.append(s).expected_ok();
    track_rounding(s, ok);
    track_double_backward(s);
    return state_.size() - 1;
  }

  std::vector<int> live() const {
    std::vector<int> out;
    for (int i = 0; i < state_.size(); ++i)
      if (state_.live(i)) out.push_back(i);
    return out;
  }

  const Meta& meta(int id) const { return *state_.value(id).meta; }

  // ---- random steps ----------------------------------------------------------------------------------------

  // Cheap pre-filter: an operand that cannot make `op` well-typed is not worth a try.
  bool fits(OpId op, int slot, int id) const {
    if (slot > 0) return true;
    const program::OpSpec& spec = program::spec(op);
    const program::Operand0& want = spec.operand0;
    const Meta& m = meta(id);
    const auto rank = static_cast<int>(m.sizes.size());
    if (!program::allows(want.dtypes, m.dtype) || rank < want.min_rank || rank > want.max_rank) return false;
    if (want.some_dim_nonempty && std::none_of(m.sizes.begin(), m.sizes.end(), [](auto s) { return s > 0; }))
      return false;
    if ((want.requires_grad && !m.requires_grad) || (want.single_element && m.numel() != 1)) return false;
    if (want.leaf && !state_.value(id).leaf) return false;
    // exp turns an absolute error of its operand into a relative error of its result. An operand computed
    // through exp, pow or a reduction carries last-bit differences that both libraries may legitimately
    // make (libm vs SLEEF, summation order): exp of it is a false alarm, not a finding.
    return !(spec.amplifies_rounding && carries_rounding(id));
  }

  // A step that turns last-bit differences of an operand into differences a tolerance cannot absorb, beyond what
  // the op table's amplifies_rounding says of an op: truncation to an integer dtype (to, copy_ into an integer
  // tensor); a float64 result of a rounded float32 operand (float32's error judged at float64's tolerance); and
  // division by a value that may have lost its leading digits to cancellation (1 - tanh(x)^2 near saturation).
  // Such cases are false alarms, not findings.
  bool loses_rounding(const Step& s) const {
    auto rounded = [&](std::size_t k) { return k < s.inputs.size() && state_.live(s.inputs[k]) && carries_rounding(s.inputs[k]); };
    auto dtype_of = [&](std::size_t k) { return meta(s.inputs[k]).dtype; };
    // The op table's amplifiers (exp, log, sqrt, eq), on any operand: recipes do not go through fits(), which
    // only judges operand 0.
    if (program::spec(s.op).amplifies_rounding)
      for (std::size_t k = 0; k < s.inputs.size(); ++k)
        if (rounded(k)) return true;
    // An out= form computes its op on the operands after out.
    const std::size_t first = program::spec(s.op).out_of ? 1 : 0;
    const OpId computes = program::spec(s.op).out_of.value_or(s.op);
    if ((computes == OpId::Div || computes == OpId::Div_) && rounded(first + 1)) return true;
    // ... and casts it into out's dtype: a rounded operand's error judged at another dtype's tolerance, or
    // truncated to an integer.
    if (first == 1 && state_.live(s.inputs[0]))
      for (std::size_t k = 1; k < s.inputs.size(); ++k)
        if (rounded(k) && dtype_of(k) != dtype_of(0)) return true;
    // A reciprocal, or a root: like sqrt, x^0.5 turns a last-bit error of a value near zero (1 - tanh^2 at
    // saturation) into an error no tolerance absorbs.
    if (s.op == OpId::Pow && rounded(0) && s.attrs.scalar.value < 1 && s.attrs.scalar.value != 0) return true;
    // A rounded user gradient reaches leaves of any dtype.
    if (program::spec(s.op).gradient >= 0 && rounded(static_cast<std::size_t>(program::spec(s.op).gradient))) return true;
    if (s.op == OpId::To) return rounded(0) && (!program::is_floating(s.attrs.dtype) || s.attrs.dtype != dtype_of(0));
    if (s.op == OpId::Copy_)
      return rounded(1) && state_.live(s.inputs[0]) && dtype_of(0) != dtype_of(1);
    // A rounded floating operand of an op that also reads another floating dtype: computed in the wider one
    // (float32 with float64), its last-bit error is judged at that dtype's tolerance; computed in the narrower
    // one (a float16 tensor times a float32 0-dim), it may tip a rounding to the other neighbour, a difference the
    // next op doubles.
    for (std::size_t k = 0; k < s.inputs.size(); ++k) {
      if (!rounded(k) || !program::is_floating(dtype_of(k))) continue;
      for (std::size_t j = 0; j < s.inputs.size(); ++j)
        if (state_.live(s.inputs[j]) && program::is_floating(dtype_of(j)) && dtype_of(j) != dtype_of(k)) return true;
    }
    return false;
  }

  // Whether value `id` was computed, at any depth, by an op whose float32 result may differ in its last bits.
  // Kept per value as steps are appended; a write into a value (exp_(v), v.add_(w) with a rounded w) marks the
  // value written too.
  bool carries_rounding(int id) const { return rounding_[static_cast<std::size_t>(id)]; }

  void track_rounding(const Step& s, bool expected_ok) {
    const program::OpSpec& op = program::spec(s.op);
    bool r = rounds(s.op);
    for (int in : s.inputs) r = r || carries_rounding(in);
    rounding_.push_back(r);
    // The memory a value lives in: its own, or its operand's for any result that may share it (the operand
    // itself, views, detach/.data and unsafe aliases, a reshape or to() that may return a view or the operand).
    using program::ResultIs;
    const bool shares = !s.inputs.empty() && op.result != ResultIs::Fresh && op.result != ResultIs::Grad &&
                        op.result != ResultIs::Nothing;
    memory_.push_back(shares ? memory_[static_cast<std::size_t>(s.inputs.front())] : state_.size() - 1);
    // A write marks every value over the written memory: the tensor under its other ids, its views, its base.
    // An assigned .grad is written by every later backward, through derivative formulas.
    auto mark = [&](int id) {
      const int written = memory_[static_cast<std::size_t>(id)];
      for (std::size_t v = 0; v < memory_.size(); ++v)
        if (memory_[v] == written) rounding_[v] = true;
    };
    if (r && op.kind == OpKind::InPlace) mark(s.inputs.front());
    if (op.writes_grad && s.inputs.size() > 1) mark(s.inputs[1]);
    // set_data: operand 0, under every id of the tensor, now lives in operand 1's memory, with its values.
    if (s.op == OpId::SetData && expected_ok) {
      const int tensor = state_.value(s.inputs[0]).tensor;
      const auto data = static_cast<std::size_t>(s.inputs[1]);
      for (int v = 0; v + 1 < state_.size(); ++v)
        if (state_.value(v).tensor == tensor) {
          memory_[static_cast<std::size_t>(v)] = memory_[data];
          rounding_[static_cast<std::size_t>(v)] = rounding_[data];
        }
    }
  }

  static bool rounds(OpId op) { return program::spec(op).rounds; }

  // Whether value `id`'s history holds only ops whose derivatives impl records as LibTorch does under create_graph
  // (program::double_backward), so that a create_graph backward from it, and anything derived from what that
  // backward makes, is worth comparing. Kept per value as steps are appended, over the memory rounding tracks.
  bool twice(int id) const { return twice_[static_cast<std::size_t>(id)]; }

  void track_double_backward(const Step& s) {
    const program::OpSpec& op = program::spec(s.op);
    bool t = program::double_backward(s.op);
    for (int in : s.inputs) t = t && twice(in);
    const auto tensor_of = [&](int id) { return state_.value(id).tensor; };
    // .grad was made by recorded formulas, unless it was assigned a value that is not.
    if (op.result == program::ResultIs::Grad) t = !untwice_grads_.contains(tensor_of(s.inputs[0]));
    twice_.push_back(t);
    if (op.writes_grad && !s.inputs.empty()) {
      if (s.inputs.size() > 1 && !twice(s.inputs[1])) untwice_grads_.insert(tensor_of(s.inputs[0]));
      else untwice_grads_.erase(tensor_of(s.inputs[0]));
    }
    // An in-place write gives the written tensor (or a view's base, through CopySlices) the op's node, and every
    // view of that memory a regenerated AsStridedBackward0, whose derivative impl does not record.
    if (!op.is_inplace() || s.inputs.empty()) return;
    const int written = memory_[static_cast<std::size_t>(s.inputs[0])];
    for (std::size_t v = 0; v < memory_.size(); ++v) {
      if (memory_[v] != written) continue;
      if (state_.value(static_cast<int>(v)).view) twice_[v] = false;
      else twice_[v] = twice_[v] && t;
    }
  }

  double operand_weight(OpId op, int slot, int id) const {
    const ValueInfo& v = state_.value(id);
    double w = id >= state_.size() - 4 ? 3.0 : 1.0;  // recent values make chains
    if (slot == 0) {
      if (op == OpId::Backward && v.meta->requires_grad && v.meta->numel() == 1) w *= 30;
      if (op == OpId::RetainGrad && !v.leaf) w *= 4;
      if ((op == OpId::Grad || op == OpId::ResetGrad) && v.has_grad) w *= 20;
      if (is_reduction_or_saver(program::spec(op)) && v.meta->requires_grad) w *= 3;
      if (program::spec(op).kind == OpKind::InPlace && v.view) w *= 2;
      if (program::spec(op).kind == OpKind::View && v.meta->sizes.empty()) w *= 0.3;
    }
    return w;
  }

  std::optional<std::vector<int>> pick_operands(OpId op, bool want_valid) {
    const program::OpSpec& spec = program::spec(op);
    std::vector<int> ids = live();
    std::vector<int> inputs;
    for (int slot = 0; slot < spec.arity; ++slot) {
      std::vector<double> w(ids.size(), 0.0);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (!want_valid) {
          w[k] = 1.0;
          continue;
        }
        if (!fits(op, slot, ids[k])) continue;
        // The last operand completes the step: the tracker judges it with default attributes (binary and
        // ternary ops read none that decide validity).
        if (slot > 0 && slot == spec.arity - 1) {
          Step probe{op, inputs, {}, true};
          probe.inputs.push_back(ids[k]);
          if (!state_.check(probe).expected_ok()) continue;
        }
        w[k] = operand_weight(op, slot, ids[k]);
      }
      int k = rng_.weighted(w);
      if (k < 0) return std::nullopt;
      inputs.push_back(ids[static_cast<std::size_t>(k)]);
    }
    return inputs;
  }

  // When no live values complete a multi-operand step (an index and values of matching shapes, a mask), its
  // other operands are made for it around a live operand 0 that fits (operands_around).
  std::optional<std::vector<int>> operands_for_first(OpId op) {
    // Room for the operands made and the step itself.
    if (program::spec(op).arity < 2 || length_ - state_.size() < program::spec(op).arity) return std::nullopt;
    std::vector<int> ids = live();
    std::vector<double> w(ids.size(), 0.0);
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (fits(op, 0, ids[k])) w[k] = operand_weight(op, 0, ids[k]);
    const int k = rng_.weighted(w);
    if (k < 0) return std::nullopt;
    return operands_around(op, ids[static_cast<std::size_t>(k)]);
  }

  std::vector<Meta> metas(const std::vector<int>& inputs) const {
    std::vector<Meta> out;
    for (int in : inputs) out.push_back(meta(in));
    return out;
  }

  std::optional<Step> make_step(OpId op, bool want_valid) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      auto inputs = pick_operands(op, want_valid);
      if (!inputs && want_valid) inputs = operands_for_first(op);
      if (!inputs) return std::nullopt;
      auto ms = metas(*inputs);
      std::int64_t storage = inputs->empty() ? 0 : state_.value((*inputs)[0]).storage_numel;
      Step s{op, *inputs, valid_attrs(rng_, op, ms, storage, cfg_.cuda), !rng_.chance(0.1)};
      if (!want_valid && (inputs->empty() || rng_.chance(0.6))) spoil_attrs(rng_, op, ms, s.attrs);
      if (!program::within_dims_limit(s)) continue;
      if (want_valid && loses_rounding(s)) continue;
      StepInfo info = state_.check(s);
      if (info.undefined) continue;
      if (want_valid && info.expected_ok()) return s;
      // Well-typed steps that raise for autograd reasons are behaviour to compare too; keep a few.
      if (want_valid && info.inputs_ok && info.table_ok && rng_.chance(0.15)) return s;
      if (!want_valid && info.ill_typed()) return s;
    }
    return std::nullopt;
  }

  void random_step() {
    const bool want_valid = !rng_.chance(cfg_.invalid_share);
    const auto& table = program::op_table();
    bool any_value = false, rg_scalar = false, rg_any = false;
    for (int id : live()) {
      any_value = true;
      rg_any = rg_any || meta(id).requires_grad;
      rg_scalar = rg_scalar || (meta(id).requires_grad && meta(id).numel() == 1);
    }
    std::vector<double> w(table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      const program::OpSpec& op = table[i];
      w[i] = op_enabled_[i] && (!op.device_only || cfg_.cuda) ? op.weight : 0;
      if (op.arity > 0 && !any_value) w[i] = 0;
      if (op.id == OpId::Backward) w[i] *= rg_scalar ? 3 : (want_valid ? 0 : 0.3);
      if (op.id == OpId::RetainGrad && want_valid && !rg_any) w[i] = 0;
      if ((op.id == OpId::Sum || op.id == OpId::Mean) && rg_any && !rg_scalar) w[i] *= 2;
    }
    for (int attempt = 0; attempt < 12; ++attempt) {
      int k = rng_.weighted(w);
      if (k < 0) break;
      if (auto s = make_step(table[static_cast<std::size_t>(k)].id, want_valid)) {
        append(*s);
        return;
      }
      w[static_cast<std::size_t>(k)] = 0;
    }
    // Nothing fits (rare: e.g. only empty values and an ill-typed wish): a fresh leaf always does.
    Step s{OpId::Rand, {}, valid_attrs(rng_, OpId::Rand, {}, 0, cfg_.cuda), true};
    append(s);
  }

  // ---- recipes: the situations where libraries go wrong, built from the same attribute generators ----------

  // Appends a well-typed step of `op` on `inputs`, with attributes drawn then adjusted by `tweak`; -1 when no
  // room is left or no attempt gives a step expected to succeed (`allow_raise`: well-typed is enough).
  int emit(OpId op, std::vector<int> inputs, const Tweak& tweak = {}, bool grad = true, bool allow_raise = false) {
    if (!room()) return -1;
    for (int in : inputs)
      if (!state_.live(in)) return -1;
    auto ms = metas(inputs);
    // The op table's operand-0 dtypes bind recipes too (no bfloat16 product, whatever dtype a recipe drew).
    if (!ms.empty() && !program::allows(program::spec(op).operand0.dtypes, ms[0].dtype) && !allow_raise) return -1;
    std::int64_t storage = inputs.empty() ? 0 : state_.value(inputs[0]).storage_numel;
    for (int attempt = 0; attempt < 8; ++attempt) {
      Step s{op, inputs, valid_attrs(rng_, op, ms, storage, cfg_.cuda), grad};
      if (tweak) tweak(s.attrs);
      if (!program::within_dims_limit(s) || loses_rounding(s)) continue;
      StepInfo info = state_.check(s);
      if (info.undefined) continue;
      if (info.expected_ok() || (allow_raise && info.inputs_ok && info.table_ok)) return append(s);
    }
    return -1;
  }

  DType floating() {
    static const DType kinds[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
    static const double weights[] = {60, 20, 10, 10};
    return kinds[std::max(rng_.weighted(weights), 0)];
  }

  // A fresh leaf with these sizes and some layout.
  int fresh(const std::vector<std::int64_t>& sizes, DType dtype, bool rg) {
    return emit(OpId::Rand, {}, [&](Attrs& a) {
      LayoutSpec l = random_layout_for(rng_, sizes);
      a.sizes = l.sizes;
      a.strides = l.strides;
      a.offset = l.offset;
      a.dtype = dtype;
      a.requires_grad = rg;
    });
  }

  // A floating leaf requiring grad: an existing one now and then, else a new one of any layout.
  int rg_leaf() {
    std::vector<int> have;
    for (int id : live())
      if (meta(id).requires_grad && state_.value(id).leaf && program::is_floating(meta(id).dtype)) have.push_back(id);
    if (!have.empty() && rng_.chance(0.4)) return rng_.pick(have);
    DType d = floating();
    return emit(OpId::Rand, {}, [d](Attrs& a) {
      a.dtype = d;
      a.requires_grad = true;
    });
  }

  // A view of `x` (or `x` itself when no view op fits it).
  // `single_output`: not unbind/split/chunk, whose outputs refuse in-place writes with grad on.
  int view_of(int x, bool grad = true, bool single_output = false) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      OpId op = rng_.pick(view_ops());
      if (single_output && program::spec(op).multi_output) op = OpId::Transpose;
      int v = emit(op, {x}, {}, grad);
      if (v >= 0) return v;
    }
    return x;
  }

  // An in-place write on `x`; overlapping memory only takes fill_/zero_.
  int write(int x, bool grad, bool allow_raise = false) {
    int w = emit(rng_.pick(scalar_writes()), {x}, {}, grad, allow_raise);
    return w >= 0 ? w : emit(OpId::Fill_, {x}, {}, grad, allow_raise);
  }

  // A one-element result of y for a backward: its sum or mean, after a conversion to float32 for a dtype the
  // reductions are not generated on (kReducibleTypes).
  int reduce(int y) {
    if (!state_.live(y)) return -1;
    if (!program::allows(program::spec(OpId::Sum).operand0.dtypes, meta(y).dtype))
      y = emit(OpId::To, {y}, [](Attrs& a) { a.dtype = DType::Float32, a.copy = false; });
    if (y < 0) return -1;
    return emit(program::is_floating(meta(y).dtype) && rng_.chance(0.4) ? OpId::Mean : OpId::Sum, {y});
  }

  // A backward from s, `times` times over a graph retained in between. Now and then it is one backward from two
  // roots: s twice, or s and another reduction of what s reduced (the roots share a graph, so a node both reach
  // runs once with the sum of what arrives).
  void backward(int s, int times) {
    for (int t = 0; t < times; ++t) {
      bool retain = t + 1 < times ? rng_.chance(0.7) : rng_.chance(0.3);
      auto keep = [retain](Attrs& a) { a.retain_graph = retain; };
      int other = rng_.chance(0.12) ? second_root(s) : -1;
      if ((other >= 0 ? emit(OpId::BackwardRoots, {s, other}, keep) : emit(OpId::Backward, {s}, keep)) < 0) return;
    }
  }

  int second_root(int s) {
    const auto& made = prog_.steps[static_cast<std::size_t>(s)];
    if (rng_.chance(0.3) || made.inputs.empty()) return s;
    int z = emit(rng_.pick({OpId::MulScalar, OpId::Exp, OpId::Neg}), {made.inputs[0]});
    return z < 0 ? -1 : reduce(z);
  }

  void recipe() {
    static const double weights[kRecipes] = {4, 3, 3, 1, 1, 2, 2, 1, 2, 4, 3, 2, 1};
    std::vector<double> w(std::begin(weights), std::end(weights));
    for (std::size_t k = 0; k < kRecipes; ++k)
      if (!recipe_enabled_[k]) w[k] = 0;
    switch (rng_.weighted(w)) {
      case -1: random_step(); break;  // a swarm without recipes
      case 8: recipe_grad_value(); break;
      case 9: recipe_interaction(); break;
      case 10: recipe_op_backward(); break;
      case 11: recipe_double_backward(); break;
      case 12: recipe_out(); break;
      case 0: recipe_saved(); break;
      case 1: recipe_copy(); break;
      case 2: recipe_view_write(); break;
      case 3: recipe_accumulate(); break;
      case 4: recipe_nograd(); break;
      case 5: recipe_gradient(); break;
      case 6: recipe_matmul(); break;
      default: recipe_flags(); break;
    }
  }

  // An op saves a tensor for backward; the tensor is written in place (itself, through a view, or through
  // its detached alias); backward must raise a version error. Variants where nothing saved is written must not.
  void recipe_saved() {
    int x = rg_leaf();
    if (x < 0) return;
    const Meta xm = meta(x);
    int y = -1, target = -1;
    bool grad_write = rng_.chance(0.8);
    switch (rng_.below(10)) {
      case 0:  // exp, sigmoid, tanh and relu save their result
        y = target = emit(rng_.pick(unary_saving(program::Saves::Result, false)), {x});
        break;
      case 6: {  // ... and so do their in-place forms, on a non-leaf
        int xn = emit(OpId::MulScalar, {x});
        y = target = xn < 0 ? -1 : emit(rng_.pick(unary_saving(program::Saves::Result, true)), {xn});
        break;
      }
      case 7: {  // abs, clamp and pow save their input
        int xn = rng_.chance(0.5) ? emit(OpId::MulScalar, {x}) : emit(OpId::Clone, {x});
        y = xn < 0 ? -1 : emit(rng_.pick(unary_saving(program::Saves::Self, false)), {xn});
        target = xn;
        break;
      }
      case 8: {  // abs_ and clamp_ save a copy of their input's value: writing their result later must not raise
        int xn = emit(OpId::Clone, {x});
        y = target = xn < 0 ? -1 : emit(rng_.pick(unary_saving(program::Saves::Self, true)), {xn});
        break;
      }
      case 9: {  // mm saves each operand only for the other's gradient
        const auto n = rng_.range(0, 3), k = rng_.range(1, 3), p = rng_.range(1, 3);
        const bool swap = rng_.chance(0.5);  // the operand requiring grad on the right: b [p, n] @ a [n, k]
        int a = fresh({n, k}, xm.dtype, true);
        int b = swap ? fresh({p, n}, xm.dtype, false) : fresh({k, p}, xm.dtype, false);
        y = a < 0 || b < 0 ? -1 : emit(rng_.chance(0.5) ? OpId::Mm : OpId::Matmul, swap ? std::vector<int>{b, a} : std::vector<int>{a, b});
        target = rng_.chance(0.5) ? a : b;
        grad_write = target == b;  // writing the rg leaf needs no_grad
        break;
      }
      case 1: {  // pow saves its input: a non-leaf copy of x, so that it may be written
        int xn = rng_.chance(0.5) ? emit(OpId::MulScalar, {x}) : emit(OpId::Clone, {x});
        y = emit(OpId::Pow, {xn});
        target = xn;
        break;
      }
      case 2: {  // mul/div by a tensor not requiring grad save that tensor
        int c = fresh(xm.sizes, xm.dtype, false);
        y = emit(rng_.chance(0.6) ? OpId::Mul : OpId::Div, {x, c});
        target = c;
        break;
      }
      case 3: {  // add/sub save nothing
        int c = fresh(xm.sizes, xm.dtype, false);
        y = emit(rng_.chance(0.5) ? OpId::Add : OpId::Sub, {x, c});
        target = c;
        break;
      }
      case 4: {  // add of a scalar saves nothing
        int xn = emit(OpId::Clone, {x});
        y = emit(OpId::AddScalar, {xn});
        target = xn;
        break;
      }
      default: {  // mul by a tensor not requiring grad does not save x: writing x (under no_grad) is fine
        int c = fresh(xm.sizes, xm.dtype, false);
        y = emit(OpId::Mul, {x, c});
        target = x;
        grad_write = false;
        break;
      }
    }
    if (y < 0 || target < 0) return;
    int through = target;
    switch (rng_.below(3)) {
      case 0: break;
      case 1: through = view_of(target, grad_write || rng_.chance(0.5), /*single_output=*/true); break;
      default: {
        int d = emit(OpId::Detach, {target});
        if (d >= 0) through = d;
        break;
      }
    }
    write(through, grad_write);
    int s = reduce(y);
    if (s >= 0) backward(s, rng_.chance(0.4) ? 2 : 1);
  }

  // The copy recipes, each with its own graph behaviour, then writes on either side.
  void recipe_copy() {
    int x = rng_.chance(0.75) ? rg_leaf() : fresh(random_shape(rng_), floating(), false);
    if (x < 0) return;
    int c = -1;
    switch (rng_.below(10)) {
      case 0: c = emit(OpId::Clone, {x}); break;
      case 5: c = emit(OpId::To, {x}, [&](Attrs& a) { a.copy = true; if (rng_.chance(0.5)) a.dtype = meta(x).dtype; }); break;
      case 6: c = emit(OpId::NewTensor, {x}); break;
      case 7: c = emit(OpId::Data, {x}); break;
      case 8: case 9: c = deepcopy_group(x); break;
      case 1: {
        int d = emit(OpId::Detach, {x});
        c = d < 0 ? -1 : emit(OpId::Clone, {d});
        break;
      }
      case 2: {
        int c0 = emit(OpId::Clone, {x});
        c = c0 < 0 ? -1 : emit(OpId::Detach, {c0});
        break;
      }
      case 3: {
        int e = emit(rng_.chance(0.5) ? OpId::EmptyLike : OpId::ZerosLike, {x});
        c = e < 0 ? -1 : emit(OpId::Copy_, {e, x});
        break;
      }
      default: c = emit(OpId::Contiguous, {x}); break;
    }
    if (c < 0) return;
    if (rng_.chance(0.5)) write(c, true);
    if (rng_.chance(0.3)) write(x, false);
    if (state_.live(c) && meta(c).requires_grad) {
      int s = reduce(c);
      if (s >= 0) backward(s, 1);
    }
  }

  // Views, then in-place writes through them (scalar or tensor operands, possibly requiring grad).
  // Writes through views of non-leaves rebase history (CopySlices); through views of leaves requiring grad and
  // through outputs of multi-output views they raise. Another view of the same base, made before the write,
  // has its grad_fn regenerated when observed after it.
  void recipe_view_write() {
    int x = -1;
    const int from = rng_.below(5);
    if (from < 2) {
      x = fresh(random_layout(rng_).sizes, floating(), false);
    } else if (from < 4) {
      int leaf = rg_leaf();
      x = leaf < 0 ? -1 : emit(rng_.chance(0.5) ? OpId::MulScalar : OpId::Clone, {leaf});
    } else {
      x = rg_leaf();  // a leaf requiring grad: the write raises
    }
    if (x < 0) return;
    int v = view_of(x);
    if (rng_.chance(0.3)) v = view_of(v);
    if (!state_.live(v)) return;
    if (rng_.chance(0.4)) view_of(x);  // a sibling view, observed after the write
    if (rng_.chance(0.1)) {  // as_strided reaching past the end of the storage raises
      const std::int64_t past = state_.value(x).storage_numel;
      emit(OpId::AsStrided, {x}, [past](Attrs& a) {
        a.sizes = {2};
        a.strides = {1};
        a.offset = past;
      }, true, /*allow_raise=*/true);
    }
    if (rng_.chance(0.15)) emit(rng_.chance(0.7) ? OpId::Detach : OpId::Detach_, {v}, {}, true, /*allow_raise=*/true);
    if (rng_.chance(0.5)) {
      write(v, true, /*allow_raise=*/true);
    } else {
      const Meta vm = meta(v);
      int other = fresh(vm.sizes, program::is_floating(vm.dtype) ? floating() : vm.dtype,
                        program::is_floating(vm.dtype) && rng_.chance(0.5));
      if (other < 0) return;
      static const std::vector<OpId> binary = {OpId::Add_, OpId::Mul_, OpId::Sub_, OpId::Copy_};
      if (emit(rng_.pick(binary), {v, other}, {}, true, /*allow_raise=*/true) < 0) write(v, true, true);
    }
    if (state_.live(x) && meta(x).requires_grad) {
      int s = reduce(x);
      if (s >= 0) backward(s, 1);
    }
  }

  // Gradients accumulate over backward calls through a retained graph.
  void recipe_accumulate() {
    int x = rg_leaf();
    if (x < 0) return;
    static const std::vector<OpId> unary = {OpId::Exp, OpId::MulScalar, OpId::Pow, OpId::AddScalar, OpId::Neg,
                                            OpId::Clone};
    int y = emit(rng_.pick(unary), {x});
    if (y < 0) return;
    int s = reduce(y);
    if (s >= 0) backward(s, rng_.chance(0.7) ? 2 : 3);
  }

  // Grad mode switches: views made under no_grad, in-place on leaves under no_grad, then with grad on.
  void recipe_nograd() {
    int x = rg_leaf();
    if (x < 0) return;
    switch (rng_.below(3)) {
      case 0: {  // a no_grad view written with grad on: fine with a scalar, raises with an operand needing grad
        int v = view_of(x, false);
        if (rng_.chance(0.5)) {
          write(v, true, true);
        } else {
          const Meta vm = meta(v);
          int other = fresh(vm.sizes, vm.dtype, true);
          if (other >= 0) emit(OpId::Add_, {v, other}, {}, true, true);
        }
        break;
      }
      case 1:  // a leaf requiring grad written under no_grad: allowed, bumps its version
        write(x, false);
        break;
      default:  // the same with grad on: raises
        write(x, true, true);
        break;
    }
    int y = emit(rng_.chance(0.5) ? OpId::Exp : OpId::MulScalar, {x});
    if (y < 0) return;
    int s = reduce(y);
    if (s >= 0) backward(s, 1);
  }

  // copy.deepcopy of x, sometimes after x got a .grad, sometimes together (one memo) with an alias of x.
  int deepcopy_group(int x) {
    if (rng_.chance(0.4) && meta(x).requires_grad) {
      int s = reduce(emit(OpId::MulScalar, {x}));
      if (s >= 0) backward(s, 1);
    }
    const std::int64_t memo = rng_.range(0, 1000);
    auto same_memo = [memo](Attrs& a) { a.memo = memo; };
    int c = emit(OpId::Deepcopy, {x}, same_memo);
    if (c >= 0 && rng_.chance(0.6)) {
      int alias = rng_.chance(0.5) ? view_of(x, false) : emit(OpId::Detach, {x});
      if (alias >= 0) emit(OpId::Deepcopy, {alias}, same_memo, true, true);
    }
    if (rng_.chance(0.3)) {  // a non-leaf refuses
      int y = emit(OpId::MulScalar, {x});
      if (y >= 0) emit(OpId::Deepcopy, {y}, same_memo, true, true);
    }
    return c;
  }

  // Leaves of every layout get gradients: the layout contract of AccumulateGrad, user gradients of other
  // dtypes or broadcast shapes, accumulation over backward calls through a retained graph.
  void recipe_gradient() {
    DType d = floating();
    int x = emit(OpId::Rand, {}, [d](Attrs& a) {
      a.dtype = d;
      a.requires_grad = true;
    });
    if (x < 0) return;
    static const std::vector<OpId> unary = {OpId::MulScalar, OpId::Sigmoid, OpId::Tanh, OpId::Clone, OpId::Abs,
                                            OpId::Relu, OpId::Neg, OpId::Permute, OpId::Transpose};
    int y = emit(rng_.pick(unary), {x});
    if (y < 0) y = x;
    if (rng_.chance(0.3)) emit(OpId::RetainGrad, {y}, {}, true, true);
    const int times = rng_.chance(0.5) ? 2 : 1;
    for (int t = 0; t < times; ++t) {
      const bool retain = t + 1 < times;
      if (rng_.chance(0.6)) {
        std::vector<std::int64_t> shape = meta(y).sizes;
        if (rng_.chance(0.25)) shape.insert(shape.begin(), rng_.range(1, 2));  // summed down to y's shape
        // A gradient summed down to y's shape is reduced in its own dtype: not a 16-bit one (kReducibleTypes).
        DType gd = rng_.chance(0.8) ? meta(y).dtype : floating();
        if (shape != meta(y).sizes && !program::allows(program::kReducibleTypes, gd)) gd = DType::Float32;
        int g = fresh(shape, gd, rng_.chance(0.2));
        auto keep = [retain](Attrs& a) { a.retain_graph = retain; };
        // Now and then autograd.grad with grad_outputs, which returns x's gradient instead of accumulating it.
        if (g < 0 || (rng_.chance(0.3) ? emit(OpId::AutogradGradOutputs, {y, x, g}, keep)
                                        : emit(OpId::BackwardGrad, {y, g}, keep)) < 0)
          return;
      } else {
        int s = reduce(y);
        if (s < 0 || emit(OpId::Backward, {s}, [retain](Attrs& a) { a.retain_graph = retain; }) < 0) return;
      }
    }
  }

  // Two or three things happen to one tensor, in a random order, then a backward goes through it: retain_grad, an
  // in-place write through a view of it, on it, through its detached alias or through a view made under no_grad,
  // an op saving it. Each alone is common; on the same tensor they are where bugs hide (a retained gradient after
  // writes through a view and then the base; a saved tensor written through an alias autograd does not see).
  void recipe_interaction() {
    int x = rg_leaf();
    if (x < 0) return;
    const int y = rng_.chance(0.85) ? emit(rng_.pick({OpId::MulScalar, OpId::Clone, OpId::AddScalar, OpId::Neg}), {x}) : x;
    if (y < 0) return;
    std::vector<int> events = {0, 1, 2, 3, 4, 5};
    rng_.shuffle(events);
    events.resize(static_cast<std::size_t>(rng_.range(2, 3)));
    int last = y;  // what the backward goes through: y, or a result that saved it
    for (int e : events) {
      switch (e) {
        case 0: emit(OpId::RetainGrad, {y}, {}, true, true); break;
        case 1: write(view_of(y, true, rng_.chance(0.8)), true, true); break;
        case 2: write(y, true, true); break;
        case 3: {
          int alias = emit(rng_.chance(0.5) ? OpId::Detach : OpId::Data, {y});
          if (alias >= 0) write(rng_.chance(0.3) ? view_of(alias, false) : alias, rng_.chance(0.5), true);
          break;
        }
        case 4: write(view_of(y, false), rng_.chance(0.3), true); break;
        default: {
          int saver = rng_.chance(0.5) ? emit(rng_.pick(unary_saving(program::Saves::Self, false)), {y})
                                       : emit(OpId::Mul, {y, fresh(meta(y).sizes, meta(y).dtype, rng_.chance(0.5))});
          if (saver >= 0) last = saver;
          break;
        }
      }
    }
    if (!state_.live(last)) last = y;
    int s = reduce(last);
    if (s >= 0) backward(s, rng_.chance(0.25) ? 2 : 1);
    if (state_.value(y).retains_grad || state_.value(y).leaf) emit(OpId::Grad, {y}, {}, true, true);
  }

  // Operands for `op` with x where it is differentiable (operand 0, or 1 when operand 0 must be of another dtype,
  // where's condition) and fresh tensors elsewhere: of x's shape (transposed for mm's second) and x's dtype (now
  // and then another floating one) or bool (a mask, a condition), or arange(x.size(0)) (an index, every entry
  // in range), the first combination the shape rule accepts. nullopt when none does or a tensor could not be
  // made.
  std::optional<std::vector<int>> operands_around(OpId op, int x) {
    const program::OpSpec& spec = program::spec(op);
    // Nothing to make: the step's attributes, drawn by emit, decide the rest (the rule cannot be judged here
    // without them).
    if (spec.arity == 1) return std::vector<int>{x};
    const Meta xm = meta(x);
    const int x_slot = program::allows(spec.operand0.dtypes, xm.dtype) ? 0 : 1;
    std::vector<Meta> slots(static_cast<std::size_t>(spec.arity), xm);
    const DType other = rng_.chance(0.8) ? xm.dtype : floating();
    enum Kind { Other, Mask, Index };
    const int others = spec.arity - 1;
    int combos = 1;
    for (int k = 0; k < others; ++k) combos *= 3;
    std::vector<Kind> kinds(static_cast<std::size_t>(spec.arity), Other);
    for (int combo = 0; combo < combos; ++combo) {
      int rest = combo;
      bool possible = true;
      for (int k = 0; k < spec.arity; ++k) {
        if (k == x_slot) continue;
        kinds[k] = static_cast<Kind>(rest % 3);
        rest /= 3;
        slots[k] = xm;
        slots[k].requires_grad = false;
        if (k == 1 && (op == OpId::Mm || op == OpId::Matmul)) std::reverse(slots[k].sizes.begin(), slots[k].sizes.end());
        if (kinds[k] == Other) slots[k].dtype = other;
        if (kinds[k] == Mask) slots[k].dtype = DType::Bool;
        if (kinds[k] == Index) {
          possible = possible && !xm.sizes.empty();
          slots[k] = Meta{{xm.sizes.empty() ? 0 : xm.sizes[0]}, DType::Int64, false};
        }
        // A fresh operand 0 must be of a dtype the op takes there (no bfloat16 product).
        if (k == 0 && !program::allows(spec.operand0.dtypes, slots[k].dtype)) possible = false;
      }
      if (!possible || !spec.infer(slots, Attrs{})) continue;
      std::vector<int> inputs;
      for (int k = 0; k < spec.arity; ++k) {
        if (k == x_slot) inputs.push_back(x);
        else if (kinds[k] == Index) inputs.push_back(emit(OpId::Arange, {}, [&](Attrs& a) { a.end = slots[k].sizes[0], a.dtype = DType::Int64; }));
        else inputs.push_back(fresh(slots[k].sizes, slots[k].dtype, kinds[k] == Other && rng_.chance(0.6)));
        if (inputs.back() < 0) return std::nullopt;
      }
      return inputs;
    }
    return std::nullopt;
  }

  // A leaf requiring grad and the result of one op backward can go through, computed from it with the operand
  // layouts, dtypes and attributes the generator draws for the op (an in-place form writes a non-leaf copy of
  // the leaf); nullopt when no such step could be made.
  struct OpOnLeaf {
    int leaf;
    int result;
  };
  std::optional<OpOnLeaf> differentiable_op_on_leaf() {
    static const std::vector<OpId> ops = [] {
      std::vector<OpId> out;
      for (const program::OpSpec& op : program::op_table())
        if (program::records_history(op) && !op.device_only) out.push_back(op.id);
      return out;
    }();
    const OpId op = rng_.pick(ops);
    const int leaf = rg_leaf();
    if (leaf < 0) return std::nullopt;
    int x = leaf;
    if (program::spec(op).is_inplace() || rng_.chance(0.2)) x = emit(OpId::MulScalar, {x});
    if (x < 0) return std::nullopt;
    const std::optional<std::vector<int>> inputs = operands_around(op, x);
    if (!inputs) return std::nullopt;
    const int y = emit(op, *inputs);
    if (y < 0 || !state_.live(y) || !meta(y).requires_grad) return std::nullopt;
    return OpOnLeaf{leaf, y};
  }

  // One differentiable op, then a backward through it: every op's derivative gets run.
  void recipe_op_backward() {
    const std::optional<OpOnLeaf> op = differentiable_op_on_leaf();
    if (!op) return;
    const int s = reduce(op->result);
    if (s < 0) return;
    backward(s, 1);
    emit(OpId::Grad, {op->leaf});  // the gradient as a value: its version shows the in-place ops its formula ran
  }

  // A backward that records itself (create_graph), then one through what it made: the gradient autograd.grad
  // returns or the .grad it accumulated, reduced (or multiplied by the leaf first) and differentiated again, as
  // gradgradcheck does. A first pass that does not retain its graph leaves the second one to reach freed nodes
  // through the saved outputs its formulas read.
  void recipe_double_backward() {
    const std::optional<OpOnLeaf> op = differentiable_op_on_leaf();
    if (!op) return;
    const int leaf = op->leaf;
    const int s = reduce(op->result);
    if (s < 0) return;
    const bool retain = rng_.chance(0.7);
    auto first = [retain](Attrs& a) {
      a.retain_graph = retain;
      a.create_graph = true;
    };
    int g = -1;
    if (rng_.chance(0.5)) {
      g = emit(OpId::AutogradGrad, {s, leaf}, first);
    } else if (emit(OpId::Backward, {s}, first) >= 0) {
      g = emit(OpId::Grad, {leaf});
    }
    if (g < 0 || !state_.live(g)) return;
    int h = g;
    if (rng_.chance(0.3) && meta(g).sizes == meta(leaf).sizes) h = emit(OpId::Mul, {g, leaf});
    const int s2 = reduce(h);
    if (s2 < 0) return;
    if (rng_.chance(0.5)) emit(OpId::AutogradGrad, {s2, leaf}, {}, true, true);
    else emit(OpId::Backward, {s2}, {}, true, true);
    emit(OpId::Grad, {leaf});
  }

  // out= forms as PyTorch's tests call them: into an empty tensor of the result's shape, one of another shape
  // (resized: its storage grown in place, then laid out as the result), one of no elements, a transposed one of
  // the right shape (its strides kept), one of another dtype (cast, or refused), or one of the inputs (which
  // may not be resized); and, with grad mode on, refused when an input or out requires grad (under no_grad a
  // leaf requiring grad is written).
  void recipe_out() {
    const OpId op = rng_.pick({OpId::AddOut, OpId::SubOut, OpId::MulOut, OpId::DivOut});
    const DType d = rng_.chance(0.8) ? floating() : DType::Int64;
    std::vector<std::int64_t> shape = {rng_.range(1, 3), rng_.range(1, 3)};
    std::vector<std::int64_t> other_shape = shape;
    if (rng_.chance(0.3)) other_shape = {shape[1]};  // broadcast
    const bool grad = rng_.chance(0.8);
    const int a = fresh(shape, d, rng_.chance(0.15));
    const int b = fresh(other_shape, d, false);
    if (a < 0 || b < 0) return;
    int out = -1;
    switch (rng_.below(6)) {
      case 0:
        out = emit(OpId::Empty, {}, [&](Attrs& at) {
          at.sizes = shape;
          at.dtype = d;
        });
        break;
      case 1: out = fresh({rng_.range(1, 7)}, d, false); break;
      case 2: out = fresh({0}, d, false); break;
      case 3: {
        const int t = fresh({shape[1], shape[0]}, d, false);
        out = t < 0 ? -1 : emit(OpId::Transpose, {t}, [](Attrs& at) { at.dim = 0, at.dim1 = 1; });
        break;
      }
      case 4: out = rng_.chance(0.5) ? a : b; break;
      default: out = fresh(shape, rng_.pick({DType::Float64, DType::Float32, DType::Int64}), !grad && rng_.chance(0.5)); break;
    }
    if (out < 0) return;
    emit(op, {out, a, b}, {}, grad, /*allow_raise=*/true);
  }

  // .grad as a value, as PyTorch's tests use it: read after a backward, written in place (grad.zero_()), assigned
  // or reset, then another backward accumulates into whatever .grad is by then (in place: the same tensor).
  void recipe_grad_value() {
    int x = rg_leaf();
    if (x < 0) return;
    int y = emit(rng_.pick({OpId::MulScalar, OpId::Sigmoid, OpId::Clone, OpId::Exp}), {x});
    if (y < 0) return;
    const bool nonleaf = rng_.chance(0.3);
    if (nonleaf) emit(OpId::RetainGrad, {y});
    const int of = nonleaf ? y : x;
    int s = reduce(y);
    if (s < 0) return;
    if (emit(OpId::Backward, {s}, [](Attrs& a) { a.retain_graph = true; }) < 0) return;
    int g = emit(OpId::Grad, {of});
    switch (rng_.below(4)) {
      case 0:
        if (g >= 0) emit(rng_.pick({OpId::Zero_, OpId::MulScalar_, OpId::AddScalar_}), {g});
        break;
      case 1: emit(OpId::ResetGrad, {of}); break;
      case 2: {
        int t = fresh(meta(of).sizes, meta(of).dtype, rng_.chance(0.1));
        if (t >= 0) emit(OpId::SetGrad, {of, t});
        break;
      }
      default:
        if (g >= 0) emit(OpId::SetGrad, {of, emit(OpId::Clone, {g})}, {}, true, true);
        break;
    }
    const bool retain = rng_.chance(0.5);
    emit(OpId::Backward, {s}, [retain](Attrs& a) { a.retain_graph = retain; }, true, true);
    emit(OpId::Grad, {of});
  }

  // mm and matmul over the ranks matmul distinguishes, one side or both requiring grad.
  void recipe_matmul() {
    DType d = floating();
    while (!program::allows(program::spec(OpId::Matmul).operand0.dtypes, d)) d = floating();
    const std::int64_t n = rng_.range(0, 3), k = rng_.range(1, 3), p = rng_.range(1, 3), b = rng_.range(1, 2);
    static const std::vector<std::vector<int>> ranks = {{2, 2}, {1, 1}, {2, 1}, {1, 2}, {3, 2}, {3, 1}, {1, 3}, {2, 3}, {3, 3}};
    const auto& r = rng_.pick(ranks);
    auto shape = [&](int rank, bool left) -> std::vector<std::int64_t> {
      if (rank == 1) return {k};
      std::vector<std::int64_t> s = left ? std::vector<std::int64_t>{n, k} : std::vector<std::int64_t>{k, p};
      if (rank == 3) s.insert(s.begin(), rng_.chance(0.3) ? 1 : b);
      return s;
    };
    const bool rg_a = rng_.chance(0.7), rg_b = !rg_a || rng_.chance(0.5);
    int a = fresh(shape(r[0], true), d, rg_a), c = fresh(shape(r[1], false), d, rg_b);
    if (a < 0 || c < 0) return;
    int y = emit(r[0] == 2 && r[1] == 2 && rng_.chance(0.5) ? OpId::Mm : OpId::Matmul, {a, c});
    if (y < 0) return;
    if (rng_.chance(0.3)) write(rng_.chance(0.5) ? a : c, false);  // a saved operand changes: version error
    int s = reduce(y);
    if (s >= 0) backward(s, 1);
  }

  // requires_grad_ on non-leaves (both values) and integer tensors, retain_grad, .grad of non-leaves.
  void recipe_flags() {
    int x = rg_leaf();
    if (x < 0) return;
    int y = emit(rng_.pick({OpId::MulScalar, OpId::Sigmoid, OpId::Clone}), {x});
    if (y < 0) return;
    switch (rng_.below(5)) {
      case 4: {
        // x.data = t (or y's) after x joined y's graph: that graph's accumulator keeps x's old shape and dtype,
        // an op after it makes a new one when the dtype changed.
        std::vector<std::int64_t> shape = meta(x).sizes;
        if (rng_.chance(0.2)) shape.insert(shape.begin(), 1);
        int t = fresh(shape, rng_.chance(0.7) ? meta(x).dtype : floating(), false);
        if (t >= 0) emit(OpId::SetData, {rng_.chance(0.8) ? x : y, t}, {}, true, true);
        if (rng_.chance(0.5)) {
          int z = emit(OpId::MulScalar, {x});
          int s2 = z < 0 ? -1 : reduce(z);
          if (s2 >= 0) backward(s2, 1);
        }
        break;
      }
      case 0: emit(OpId::RequiresGrad_, {y}, [](Attrs& a) { a.requires_grad = true; }, true, true); break;
      case 1: emit(OpId::RequiresGrad_, {y}, [](Attrs& a) { a.requires_grad = false; }, true, true); break;
      case 2: {
        int i = emit(OpId::Arange, {}, [](Attrs& a) { a.dtype = DType::Int64; });
        if (i >= 0 && room() && cfg_.invalid_share > 0) {  // ill-typed on purpose: only floating tensors may require grad
          Step s{OpId::RequiresGrad_, {i}, {}, true};
          s.attrs.requires_grad = true;
          append(s);
        }
        break;
      }
      default: emit(OpId::RetainGrad, {y}); break;
    }
    int s = reduce(y);
    if (s >= 0) backward(s, 1);
  }

  Rng& rng_;
  const GenConfig& cfg_;
  int length_;
  ProgramState state_;
  Program prog_;
  std::vector<bool> rounding_;  // per value: carries_rounding
  std::vector<int> memory_;     // per value: the value whose memory it lives in (rounding marks)
  std::vector<bool> twice_;     // per value: twice()
  std::set<int> untwice_grads_;  // tensors (ValueInfo::tensor) whose .grad was assigned a value that is not twice()
  std::vector<bool> op_enabled_;               // per OpId: random steps may use it (swarm testing)
  std::array<bool, kRecipes> recipe_enabled_{};  // per recipe
};

int program_length(Rng& rng, int size, const GenConfig& cfg) {
  int max_steps = std::max(cfg.max_steps, 1);
  // Even the smallest sizes get a few steps: one or two steps rarely show anything about aliasing or autograd.
  int cap = std::clamp(max_steps * std::clamp(size, 0, rc::kNominalSize) / rc::kNominalSize, std::min(4, max_steps),
                       max_steps);
  return cap <= 2 ? cap : static_cast<int>(rng.range((cap + 1) / 2, cap));
}

}  // namespace

rc::Gen<Program> programs(GenConfig cfg) {
  return rc::Gen<Program>([cfg](const rc::Random& random, int size) {
    rc::Random r = random;
    Rng rng(r.next());
    Builder b(rng, cfg, program_length(rng, size, cfg));
    return rc::shrinkable::shrinkRecur(b.build(), &shrinks);
  });
}

rc::Shrinkable<Program> generate(std::uint64_t seed, int size, const GenConfig& cfg) {
  return programs(cfg)(rc::Random(seed), size);
}

}  // namespace parity::generators
