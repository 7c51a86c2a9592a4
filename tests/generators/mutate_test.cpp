// Coverage guidance's mutations (generators/mutate.h): each adds what it says, mutants are programs the
// generator itself admits, and the same stream gives the same mutant.
#include <gtest/gtest.h>

#include <algorithm>

#include "generators/mutate.h"
#include "generators/program_gen.h"
#include "generators/program_state.h"
#include "program/json.h"
#include "program/program_builder.h"

namespace parity::generators {
namespace {

using program::OpId;
using program::Program;

constexpr int kPrograms = 200;

Program parent(std::uint64_t seed) { return generate(seed, rc::kNominalSize, {}).value(); }

std::size_t count_of(const Program& p, bool (*pred)(const program::Step&)) {
  return static_cast<std::size_t>(std::count_if(p.steps.begin(), p.steps.end(), pred));
}

ProgramState replayed(const Program& p) {
  ProgramState state;
  for (const auto& s : p.steps) state.append(s);
  return state;
}

// The mutants of kPrograms generated programs that `m` applies to, with their parents.
std::vector<std::pair<Program, Program>> mutants(Mutation m) {
  std::vector<std::pair<Program, Program>> out;
  for (std::uint64_t seed = 0; seed < kPrograms; ++seed) {
    Rng rng(seed * 31 + 7);
    const Program p = parent(seed);
    if (auto q = mutate_with(p, m, rng, {})) out.emplace_back(p, std::move(*q));
  }
  return out;
}

TEST(Mutate, MutantsAreProgramsTheGeneratorAdmits) {
  int made = 0;
  const GenConfig cfg;
  for (std::uint64_t seed = 0; seed < kPrograms; ++seed) {
    const Program p = parent(seed);
    Rng rng(seed), again(seed);
    const auto q = mutate(p, rng, cfg);
    ASSERT_EQ(q, mutate(p, again, cfg)) << "seed " << seed << ": the same stream gives another mutant";
    if (!q) continue;
    ++made;
    std::string why;
    EXPECT_TRUE(well_formed(*q, &why)) << why;
    for (const StepInfo& info : analyze(*q)) EXPECT_FALSE(info.undefined) << "seed " << seed;
    EXPECT_NE(*q, p);
    EXPECT_LE(q->steps.size(), std::max<std::size_t>(p.steps.size(), cfg.max_steps + kGrowthSteps));
  }
  EXPECT_GT(made, kPrograms * 3 / 4) << "most programs have some mutation";
}

TEST(Mutate, ExtendKeepsTheProgramAndAddsSteps) {
  const auto made = mutants(Mutation::Extend);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    ASSERT_GT(q.steps.size(), p.steps.size());
    EXPECT_TRUE(std::equal(p.steps.begin(), p.steps.end(), q.steps.begin()));
  }
}

// Whether `q` is `p` with step `a` put in and read by some later steps in place of what they read in `p` (its
// operand, or for a sibling view another view of the same base).
bool is_p_reading_alias(const Program& p, const Program& q, int a) {
  if (q.steps.size() != p.steps.size() + 1) return false;
  bool read = false;
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    program::Step s = q.steps[i < static_cast<std::size_t>(a) ? i : i + 1];
    if (s.inputs.size() != p.steps[i].inputs.size()) return false;
    for (std::size_t k = 0; k < s.inputs.size(); ++k) {
      if (s.inputs[k] == a) {
        read = true;
        s.inputs[k] = p.steps[i].inputs[k];
      } else if (s.inputs[k] > a) {
        --s.inputs[k];
      }
    }
    // A create_graph backward through the alias is asked for only where impl records its derivative as LibTorch
    // does (StepBuilder::append).
    program::Step t = p.steps[i];
    if (!s.attrs.create_graph) t.attrs.create_graph = false;
    if (!(s == t)) return false;
  }
  return read;
}

TEST(Mutate, SwapOperandPutsOneAliasInAndUsesIt) {
  const auto made = mutants(Mutation::SwapOperand);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    ASSERT_EQ(q.steps.size(), p.steps.size() + 1);
    // Some step of the mutant is an alias whose users read its operand instead in the parent.
    bool found = false;
    for (std::size_t a = 0; a < q.steps.size() && !found; ++a) {
      const program::OpSpec& op = program::spec(q.steps[a].op);
      const bool alias = op.result == program::ResultIs::View || op.id == OpId::Clone || op.id == OpId::Detach ||
                         op.id == OpId::Grad;
      found = alias && is_p_reading_alias(p, q, static_cast<int>(a));
    }
    EXPECT_TRUE(found) << program::to_json(q).dump();
  }
}

// Now and then the alias put in stands in a later operand for operand 0: an in-place source sharing the
// destination's storage.
TEST(Mutate, SwapOperandSometimesSharesOperandZerosStorage) {
  std::size_t shared = 0;
  for (const auto& [p, q] : mutants(Mutation::SwapOperand))
    for (std::size_t a = 0; a < q.steps.size(); ++a) {
      if (q.steps[a].inputs.empty() || !is_p_reading_alias(p, q, static_cast<int>(a))) continue;
      for (const program::Step& s : q.steps)
        for (std::size_t k = 1; k < s.inputs.size(); ++k)
          shared += s.inputs[k] == static_cast<int>(a) && s.inputs[0] == q.steps[a].inputs[0];
    }
  EXPECT_GT(shared, 0u);
}

TEST(Mutate, RetainViewRetainsAViewsGrad) {
  const auto made = mutants(Mutation::RetainView);
  ASSERT_FALSE(made.empty());
  auto retains = [](const program::Step& s) { return s.op == OpId::RetainGrad; };
  for (const auto& [p, q] : made) {
    ASSERT_EQ(count_of(q, retains), count_of(p, retains) + 1);
    const ProgramState info = replayed(q);
    bool on_view = false;
    for (const auto& s : q.steps)
      if (retains(s)) on_view = on_view || info.value(s.inputs[0]).view;
    EXPECT_TRUE(on_view);
  }
}

// The view retained is read by a step after it (so a later backward through that step fills its .grad), as a rule.
TEST(Mutate, RetainViewRetainsAViewALaterStepReads) {
  const auto made = mutants(Mutation::RetainView);
  std::size_t read_later = 0;
  for (const auto& [p, q] : made) {
    for (std::size_t i = 0; i < q.steps.size(); ++i) {
      if (q.steps[i].op != OpId::RetainGrad) continue;
      const int v = q.steps[i].inputs[0];
      const bool read = std::any_of(q.steps.begin() + static_cast<std::ptrdiff_t>(i) + 1, q.steps.end(),
                                    [&](const program::Step& s) {
                                      return std::find(s.inputs.begin(), s.inputs.end(), v) != s.inputs.end();
                                    });
      if (read && std::count(p.steps.begin(), p.steps.end(), q.steps[i]) == 0) ++read_later;
    }
  }
  EXPECT_GT(read_later, made.size() / 2) << "of " << made.size() << " mutants";
}

// Some writes land on what the very next step reads, or on the base of a view it reads: a view × a write to its
// storage.
TEST(Mutate, WriteBeforeWritesWhatTheNextStepReads) {
  const auto made = mutants(Mutation::WriteBefore);
  std::size_t aimed = 0;
  for (const auto& [p, q] : made) {
    const ProgramState state = replayed(q);
    for (std::size_t i = 0; i + 1 < q.steps.size(); ++i) {
      if (!program::spec(q.steps[i].op).is_inplace() || q.steps[i].inputs.empty()) continue;
      const int w = q.steps[i].inputs[0];
      const auto& next = q.steps[i + 1].inputs;
      aimed += std::any_of(next.begin(), next.end(), [&](int in) {
        return in == w || (state.value(in).view && state.value(in).base == w);
      });
    }
  }
  EXPECT_GT(aimed, made.size() / 4) << "of " << made.size() << " mutants";
}

TEST(Mutate, WriteBeforeAddsAnInPlaceWrite) {
  const auto made = mutants(Mutation::WriteBefore);
  ASSERT_FALSE(made.empty());
  auto writes = [](const program::Step& s) { return program::spec(s.op).is_inplace(); };
  for (const auto& [p, q] : made) EXPECT_GT(count_of(q, writes), count_of(p, writes));
}

TEST(Mutate, EdgeScalarChangesOneScalarOnly) {
  const auto made = mutants(Mutation::EdgeScalar);
  ASSERT_FALSE(made.empty());
  int changed = 0;
  for (const auto& [p, q] : made) {
    ASSERT_EQ(q.steps.size(), p.steps.size());
    int differing = 0;
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      program::Step a = p.steps[i], b = q.steps[i];
      if (a == b) continue;
      ++differing;
      a.attrs.scalar = b.attrs.scalar;
      EXPECT_EQ(a, b) << "only the scalar changes";
    }
    EXPECT_LE(differing, 1);  // an edge may be the value it had
    changed += differing;
  }
  EXPECT_GT(changed, 0);
}

// ZeroDimOperand puts one fresh 0-dim tensor in, of another dtype than the operand 0 of the step that now reads it
// in a later operand's place.
TEST(Mutate, ZeroDimOperandPutsAZeroDimTensorOfAnotherDtypeIn) {
  const auto made = mutants(Mutation::ZeroDimOperand);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    ASSERT_EQ(q.steps.size(), p.steps.size() + 1);
    const auto full = std::find_if(q.steps.begin(), q.steps.end(), [&](const program::Step& s) {
      return s.op == OpId::Full && s.attrs.sizes.empty() &&
             std::count(q.steps.begin(), q.steps.end(), s) > std::count(p.steps.begin(), p.steps.end(), s);
    });
    ASSERT_NE(full, q.steps.end()) << program::to_json(q).dump();
    const int z = static_cast<int>(full - q.steps.begin());
    const auto reader = std::find_if(full + 1, q.steps.end(), [&](const program::Step& s) {
      return std::find(s.inputs.begin() + 1, s.inputs.end(), z) != s.inputs.end();
    });
    ASSERT_NE(reader, q.steps.end()) << program::to_json(q).dump();
    const program::Step& operand0 = q.steps[static_cast<std::size_t>(reader->inputs[0])];
    if (program::spec(operand0.op).reads(program::Attr::DType)) EXPECT_NE(operand0.attrs.dtype, full->attrs.dtype);
  }
}

// WrittenView: some step reads a view whose base an in-place step wrote after the view was made.
TEST(Mutate, WrittenViewMakesAStepReadAViewOfAWrittenStorage) {
  const auto made = mutants(Mutation::WrittenView);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    const ProgramState state = replayed(q);
    bool found = false;
    for (std::size_t i = 0; i < q.steps.size() && !found; ++i)
      for (int in : q.steps[i].inputs) {
        if (!state.value(in).view) continue;
        const int base = state.value(in).base;
        for (std::size_t w = static_cast<std::size_t>(in) + 1; w < i && !found; ++w)
          found = program::spec(q.steps[w].op).is_inplace() && !q.steps[w].inputs.empty() &&
                  q.steps[w].inputs[0] == base;
      }
    EXPECT_TRUE(found) << program::to_json(q).dump();
  }
}

// SharedOperand: always a later operand in operand 0's storage (a view, a sibling view or a detach of it), where
// SwapOperand does so now and then.
TEST(Mutate, SharedOperandPutsAnAliasOfOperandZeroInALaterSlot) {
  const auto made = mutants(Mutation::SharedOperand);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    ASSERT_EQ(q.steps.size(), p.steps.size() + 1);
    const ProgramState state = replayed(q);
    // The value whose storage v is over: through views to their base, through detach to its operand.
    auto storage_of = [&](int v) {
      for (;;) {
        const program::Step& made = q.steps[static_cast<std::size_t>(v)];
        if (state.value(v).view) v = state.value(v).base;
        else if (made.op == OpId::Detach) v = made.inputs[0];
        else return v;
      }
    };
    bool shared = false;
    for (std::size_t a = 0; a < q.steps.size() && !shared; ++a) {
      if (!is_p_reading_alias(p, q, static_cast<int>(a))) continue;
      for (const program::Step& s : q.steps)
        for (std::size_t k = 1; k < s.inputs.size(); ++k)
          shared = shared || (s.inputs[k] == static_cast<int>(a) && storage_of(s.inputs[0]) == storage_of(s.inputs[k]));
    }
    EXPECT_TRUE(shared) << program::to_json(q).dump();
  }
}

// GradOperand: a grad step put in, read by the next step in place of the tensor it reads the .grad of.
TEST(Mutate, GradOperandReadsATensorsGradInItsPlace) {
  const auto made = mutants(Mutation::GradOperand);
  ASSERT_FALSE(made.empty());
  for (const auto& [p, q] : made) {
    ASSERT_EQ(q.steps.size(), p.steps.size() + 1);
    bool found = false;
    for (std::size_t a = 0; a < q.steps.size() && !found; ++a)
      found = q.steps[a].op == OpId::Grad && is_p_reading_alias(p, q, static_cast<int>(a));
    EXPECT_TRUE(found) << program::to_json(q).dump();
  }
}

// MemoView and MemoGrad: before the deepcopy, a deepcopy under its memo of a view of its operand, or of its .grad
// (or of the tensor whose .grad it is).
TEST(Mutate, MemoMutationsDeepcopyARelativeUnderTheSameMemo) {
  program::ProgramBuilder b;
  const int x = b.rand({2, 3}, program::DType::Float32, true);
  b.backward(b.unary(OpId::Sum, x));
  const int g = b.unary(OpId::Grad, x);
  b.deepcopy(x, 5);
  b.deepcopy(g, 6);
  const Program p = b.program();
  const int copy_of_x = 4, copy_of_g = 5;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    const auto view = mutate_at(p, Mutation::MemoView, copy_of_x, rng, {});
    ASSERT_TRUE(view);
    ASSERT_EQ(view->steps.size(), p.steps.size() + 2);  // the view, its deepcopy
    const program::Step& v = view->steps[4];
    const program::Step& d = view->steps[5];
    EXPECT_EQ(program::spec(v.op).kind, program::OpKind::View) << program::to_json(*view).dump();
    EXPECT_EQ(v.inputs, std::vector<int>{x});
    EXPECT_EQ(d.op, OpId::Deepcopy);
    EXPECT_EQ(d.inputs, std::vector<int>{4});
    EXPECT_EQ(d.attrs.memo, 5);

    const auto of_grad = mutate_at(p, Mutation::MemoGrad, copy_of_x, rng, {});
    ASSERT_TRUE(of_grad);
    ASSERT_EQ(of_grad->steps.size(), p.steps.size() + 2);  // x's .grad read again, its deepcopy
    EXPECT_EQ(of_grad->steps[4].op, OpId::Grad);
    EXPECT_EQ(of_grad->steps[5].inputs, std::vector<int>{4});
    EXPECT_EQ(of_grad->steps[5].attrs.memo, 5);

    const auto of_owner = mutate_at(p, Mutation::MemoGrad, copy_of_g, rng, {});
    ASSERT_TRUE(of_owner);
    ASSERT_EQ(of_owner->steps.size(), p.steps.size() + 1);  // the tensor whose .grad g is, copied first
    EXPECT_EQ(of_owner->steps[5].op, OpId::Deepcopy);
    EXPECT_EQ(of_owner->steps[5].inputs, std::vector<int>{x});
    EXPECT_EQ(of_owner->steps[5].attrs.memo, 6);
  }
  Rng rng(1);
  EXPECT_FALSE(mutate_at(p, Mutation::MemoGrad, 1, rng, {})) << "no deepcopy there";

  program::ProgramBuilder fresh;  // a leaf no backward reached yet: one fills its .grad first
  fresh.deepcopy(fresh.rand({3}, program::DType::Float32, true), 2);
  const auto filled = mutate_at(fresh.program(), Mutation::MemoGrad, 1, rng, {});
  ASSERT_TRUE(filled);
  std::vector<OpId> ops;
  for (const program::Step& s : filled->steps) ops.push_back(s.op);
  EXPECT_EQ(ops.back(), OpId::Deepcopy);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), OpId::Backward), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), OpId::Grad), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), OpId::Deepcopy), 2);
}

}  // namespace
}  // namespace parity::generators
