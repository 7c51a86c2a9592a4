// The program generator: determinism, well-formedness, coverage of the op table and of invalid steps, and
// shrinks that are smaller and still well-formed. Also the stride arithmetic and layouts it builds on.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "generators/layout_gen.h"
#include "generators/program_gen.h"
#include "generators/program_state.h"
#include "generators/program_text.h"
#include "generators/shrink.h"
#include "generators/step_builder.h"
#include "generators/strides.h"
#include "program/json.h"
#include "program/program_builder.h"
#include "program/splitmix.h"

namespace parity::generators {
namespace {

using program::OpId;
using program::Program;
using program::Step;

Program program_for(std::uint64_t seed, int size = rc::kNominalSize, GenConfig cfg = {}) {
  return generate(seed, size, cfg).value();
}

// Recorded seeds replay only while the stream is SplitMix64 exactly: its published outputs for state 0.
TEST(GeneratorTest, RngIsSplitMix64) {
  Rng rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
  static_assert(program::splitmix64(0) == 0xe220a8397b1dcdafULL);
}

TEST(GeneratorTest, SameSeedSameProgram) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    int size = static_cast<int>(seed * 7 % 101);
    EXPECT_EQ(program_for(seed, size), program_for(seed, size)) << "seed " << seed;
  }
  std::set<std::string> distinct;
  for (std::uint64_t seed = 0; seed < 60; ++seed) distinct.insert(describe(program_for(seed)));
  EXPECT_GT(distinct.size(), 55u) << "different seeds should give different programs";
}

TEST(GeneratorTest, ProgramsAreWellFormed) {
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    Program p = program_for(seed, static_cast<int>(seed % 101));
    std::string why;
    ASSERT_TRUE(well_formed(p, &why)) << "seed " << seed << ": " << why << "\n" << describe(p);
    ASSERT_FALSE(p.steps.empty());
    ASSERT_LE(static_cast<int>(p.steps.size()), GenConfig{}.max_steps);
    // The generator never uses a value it expects not to exist.
    auto info = analyze(p);
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      ASSERT_TRUE(info[i].inputs_ok) << "seed " << seed << " step " << i << "\n" << describe(p);
  }
}

// The combinations of two situations on one tensor that recipes build: a view (or sibling) retaining its grad,
// then a write into its base, then a backward from the view; a tensor and its .grad deep-copied under one memo;
// both tensors one node saved written before its backward.
TEST(GeneratorTest, BuildsSituationsMeetingOnOneTensor) {
  bool retained_view_base_written = false, grad_copied_with_memo = false, both_saved_written = false;
  for (std::uint64_t seed = 0; seed < 3000; ++seed) {
    const Program p = program_for(seed);
    const auto& st = p.steps;
    auto written_after = [&](int id, std::size_t from) {
      for (std::size_t j = from; j < st.size(); ++j)
        if (program::spec(st[j].op).is_inplace() && st[j].inputs.at(0) == id) return j;
      return st.size();
    };
    for (std::size_t i = 0; i < st.size(); ++i) {
      if (st[i].op == OpId::RetainGrad) {
        const int v = st[i].inputs[0];
        if (program::spec(st[v].op).result != program::ResultIs::View) continue;
        const std::size_t w = written_after(st[v].inputs[0], i + 1);
        for (std::size_t j = w + 1; j < st.size(); ++j)
          retained_view_base_written = retained_view_base_written ||
                                       (st[j].op == OpId::Backward && st[st[j].inputs[0]].inputs.at(0) == v);
      }
      if (st[i].op == OpId::Deepcopy && st[st[i].inputs[0]].op == OpId::Grad)
        for (std::size_t j = 0; j < st.size(); ++j)
          grad_copied_with_memo = grad_copied_with_memo ||
                                  (st[j].op == OpId::Deepcopy && st[j].attrs.memo == st[i].attrs.memo &&
                                   st[j].inputs[0] == st[st[i].inputs[0]].inputs[0]);
      if ((st[i].op == OpId::Mul || st[i].op == OpId::Mm) &&
          program::spec(st[st[i].inputs[0]].op).kind != program::OpKind::Factory &&
          program::spec(st[st[i].inputs[1]].op).kind != program::OpKind::Factory)
        both_saved_written = both_saved_written || (written_after(st[i].inputs[0], i + 1) < st.size() &&
                                                    written_after(st[i].inputs[1], i + 1) < st.size());
    }
  }
  EXPECT_TRUE(retained_view_base_written);
  EXPECT_TRUE(grad_copied_with_memo);
  EXPECT_TRUE(both_saved_written);
}

TEST(GeneratorTest, CoversEveryOpAndBothValidAndInvalidSteps) {
  std::map<OpId, int> ops;
  int valid = 0, ill_typed = 0, raising = 0, no_grad = 0, steps = 0;
  for (std::uint64_t seed = 0; seed < 1500; ++seed) {
    Program p = program_for(1000 + seed);
    auto info = analyze(p);
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      ++ops[p.steps[i].op];
      ++steps;
      valid += info[i].expected_ok();
      ill_typed += info[i].ill_typed();
      raising += info[i].table_ok && info[i].raises;
      no_grad += !p.steps[i].grad_enabled;
    }
  }
  for (const auto& op : program::op_table())
    if (!op.device_only) {
      EXPECT_GT(ops[op.id], 0) << "op never generated: " << op.name;
    }
  EXPECT_GT(valid, steps * 7 / 10);
  EXPECT_GT(ill_typed, steps / 50);
  EXPECT_GT(raising, 0);
  EXPECT_GT(no_grad, steps / 30);
  EXPECT_GT(ops[OpId::Backward], 300) << "backward should be common: the interesting checks happen there";
}

// By default nothing is drawn for devices: every factory is on the CPU, no _like factory names a device and no
// device-only op (to_device) is generated, so CPU campaigns' programs are those of a build that knew no device.
// With `cuda`, factories and to_device put tensors on both devices.
TEST(GeneratorTest, DevicesOnlyWhenAskedFor) {
  auto count = [](bool cuda) {
    std::map<std::string, int> n;
    GenConfig cfg;
    cfg.cuda = cuda;
    for (std::uint64_t seed = 0; seed < 300; ++seed)
      for (const Step& s : program_for(2000 + seed, rc::kNominalSize, cfg).steps) {
        const auto& op = program::spec(s.op);
        n["device_only"] += op.device_only;
        if (op.reads(program::Attr::Device)) ++n[s.attrs.device == program::Device::CUDA ? "cuda" : "cpu"];
        if (op.reads(program::Attr::LikeDevice)) n["like_device"] += s.attrs.like_device.has_value();
      }
    return n;
  };
  auto cpu = count(false);
  EXPECT_EQ(cpu["device_only"], 0);
  EXPECT_EQ(cpu["cuda"], 0);
  EXPECT_EQ(cpu["like_device"], 0);
  EXPECT_GT(cpu["cpu"], 100);
  auto cuda = count(true);
  EXPECT_GT(cuda["device_only"], 0);
  EXPECT_GT(cuda["cuda"], cuda["cpu"]) << "mostly cuda";
  EXPECT_GT(cuda["cpu"], 0) << "and some cpu, so that operands meet on two devices";
  EXPECT_GT(cuda["like_device"], 0);
}

// A create_graph backward is generated, and only from roots whose history holds ops whose derivatives impl
// records as LibTorch does (program::double_backward); a backward through what it made follows now and then.
TEST(GeneratorTest, CreateGraphOnlyThroughOpsThatRecordTheirDerivative) {
  int recorded = 0, second = 0;
  for (std::uint64_t seed = 0; seed < 4000; ++seed) {  // a second-order backward: a few programs in a thousand
    Program p = program_for(5000 + seed);
    std::vector<bool> made_by_create_graph(p.steps.size(), false);
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      const program::Step& s = p.steps[i];
      for (int in : s.inputs) made_by_create_graph[i] = made_by_create_graph[i] || made_by_create_graph[in];
      if (!s.attrs.create_graph) continue;
      ++recorded;
      made_by_create_graph[i] = true;
      for (int in : s.inputs) second += made_by_create_graph[in];
      std::vector<int> stack(s.inputs.begin(), s.inputs.end());
      std::vector<bool> seen(p.steps.size(), false);
      while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        if (seen[v]) continue;
        seen[v] = true;
        ASSERT_TRUE(program::double_backward(p.steps[v].op))
            << "seed " << seed << ": create_graph at step " << i << " through " << program::spec(p.steps[v].op).name
            << "\n" << describe(p);
        stack.insert(stack.end(), p.steps[v].inputs.begin(), p.steps[v].inputs.end());
      }
    }
  }
  EXPECT_GT(recorded, 100);
  EXPECT_GT(second, 0) << recorded << " create_graph backwards";
}

// LibTorch 1.13 reads a saved masked_fill mask's bytes as bools whatever they hold: set_data giving it non-bool
// data is undefined there, and the tracker says so (bool data, or a mask nothing saved, stays defined).
TEST(ProgramStateTest, SetDataOnASavedMaskIsUndefined) {
  using program::DType;
  program::ProgramBuilder b;
  const int x = b.rand({2}, DType::Float32, true);
  const int mask = b.rand({2}, DType::Bool);
  b.step(OpId::MaskedFill, {x, mask});
  const int unsaved = b.rand({2}, DType::Bool);
  const int floats = b.rand({2});
  Program p = b.program();
  ProgramState state;
  for (const auto& s : p.steps) state.append(s);
  EXPECT_TRUE(state.check({OpId::SetData, {mask, floats}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::SetData, {mask, unsaved}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::SetData, {unsaved, floats}, {}, true}).undefined);
}

// An index computed from contents no program fixes (randn_like's samples) picks other elements on each backend,
// or raises on one only: never generated. Contents known again (zeros_like reads none) index as any other.
TEST(ProgramStateTest, AnIndexOfUnknownContentsIsUndefined) {
  using program::DType;
  program::ProgramBuilder b;
  const int x = b.rand({2, 3});
  const int samples = b.step(OpId::RandnLike, {x});
  program::Attrs to_long;
  to_long.dtype = DType::Int64;
  const int unknown = b.step(OpId::To, {samples}, to_long);
  const int known = b.step(OpId::To, {b.step(OpId::ZerosLike, {samples})}, to_long);
  const int y = b.rand({2});
  ProgramState state;
  for (const auto& s : b.program().steps) state.append(s);
  EXPECT_TRUE(state.check({OpId::Index, {y, unknown}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::Index, {y, known}, {}, true}).undefined);
  // Written into a tensor in place, they make it unknown too.
  state.append({OpId::Copy_, {known, unknown}, {}, true});
  EXPECT_TRUE(state.check({OpId::Index, {y, known}, {}, true}).undefined);
}

// LibTorch 2.x corrupts memory on a write through a view into an unsafe_split output (not the first) whose grad
// is retained (a later grad segfaults): never generated. A direct write (2.x's INTERNAL ASSERT, ledgered), one
// into the first output, or one without retain_grad is ordinary.
TEST(ProgramStateTest, AWriteIntoARetainedUnsafeOutputIsUndefined) {
  program::ProgramBuilder b;
  const int y = b.unary(OpId::Clone, b.rand({2}, program::DType::Float32, /*requires_grad=*/true));
  program::Attrs split;
  split.size = 1, split.dim = 0, split.index = 1;
  const int z = b.step(OpId::UnsafeSplit, {y}, split);
  const int other = b.step(OpId::UnsafeSplit, {y}, [&] {
    program::Attrs a = split;
    a.index = 0;
    return a;
  }());
  const int view = b.with_dims(OpId::SqueezeDim, z, 0);
  const int first_view = b.with_dims(OpId::SqueezeDim, other, 0);
  ProgramState state;
  for (const auto& s : b.program().steps) state.append(s);
  program::Attrs two;
  two.scalar = {program::Scalar::Kind::Float, 2.0};
  EXPECT_FALSE(state.check({OpId::MulScalar_, {view}, two, true}).undefined);
  state.append({OpId::RetainGrad, {z}, {}, true});
  EXPECT_TRUE(state.check({OpId::MulScalar_, {view}, two, true}).undefined);
  EXPECT_FALSE(state.check({OpId::MulScalar_, {z}, two, true}).undefined);
  state.append({OpId::RetainGrad, {other}, {}, true});
  EXPECT_FALSE(state.check({OpId::MulScalar_, {first_view}, two, true}).undefined);
}

// Tensor.__deepcopy__ keys its memo by storage address without keeping storages alive: after set_data freed one,
// reusing a memo from before may hit a copy through a reused address, so that is never generated.
TEST(ProgramStateTest, AMemoUsedBeforeASetDataIsNotUsedAgain) {
  using program::DType;
  program::ProgramBuilder b;
  const int x = b.rand({2});
  b.deepcopy(x, 1);
  const int y = b.rand({2});
  b.step(OpId::SetData, {x, y});
  ProgramState state;
  for (const auto& s : b.program().steps) state.append(s);
  program::Attrs memo;
  memo.memo = 1;
  EXPECT_TRUE(state.check({OpId::Deepcopy, {y}, memo, true}).undefined);
  memo.memo = 2;
  EXPECT_FALSE(state.check({OpId::Deepcopy, {y}, memo, true}).undefined);
}

// An integer index out of range fails a device-side assert in LibTorch on cuda, which breaks the process's CUDA
// context: on cuda an integer index is used only when its entries are known to be in range (an arange no write
// changed since), wherever the index itself lives; a bool mask, and any index into a CPU tensor, always.
TEST(ProgramStateTest, AnIntegerIndexIntoACudaTensorMustBeKnownInRange) {
  using program::DType;
  program::ProgramBuilder b;
  program::Attrs on_cuda;
  on_cuda.device = program::Device::CUDA;
  on_cuda.sizes = {3, 2};
  on_cuda.dtype = DType::Float32;
  const int x = b.step(OpId::Zeros, {}, on_cuda);
  const int cpu_x = b.rand({3, 2});
  program::Attrs upto;
  upto.dtype = DType::Int64;
  upto.end = 3;
  const int in_range = b.step(OpId::Arange, {}, upto);
  upto.end = 4;
  const int too_long = b.step(OpId::Arange, {}, upto);
  const int unknown = b.rand({2}, DType::Int64);
  const int mask = b.rand({3}, DType::Bool);
  upto.end = 3;
  const int written = b.step(OpId::Arange, {}, upto);
  ProgramState state;
  for (const auto& s : b.program().steps) state.append(s);
  EXPECT_FALSE(state.check({OpId::Index, {x, in_range}, {}, true}).undefined);
  EXPECT_TRUE(state.check({OpId::Index, {x, too_long}, {}, true}).undefined);
  EXPECT_TRUE(state.check({OpId::Index, {x, unknown}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::Index, {x, mask}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::Index, {cpu_x, unknown}, {}, true}).undefined);
  // A write in place may put any entry there.
  program::Attrs one;
  one.scalar = {program::Scalar::Kind::Int, 1};
  ASSERT_TRUE(state.append({OpId::AddScalar_, {written}, one, true}).expected_ok());
  EXPECT_TRUE(state.check({OpId::Index, {x, written}, {}, true}).undefined);
  EXPECT_FALSE(state.check({OpId::Index, {cpu_x, written}, {}, true}).undefined);
}

TEST(GeneratorTest, NoInvalidShareNoIllTypedSteps) {
  GenConfig cfg;
  cfg.invalid_share = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Program p = program_for(seed, rc::kNominalSize, cfg);
    auto info = analyze(p);
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      ASSERT_FALSE(info[i].ill_typed()) << "seed " << seed << " step " << i << "\n" << describe(p);
  }
}

TEST(GeneratorTest, LengthFollowsSize) {
  GenConfig cfg;
  cfg.max_steps = 30;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_LE(program_for(seed, 0, cfg).steps.size(), 4u);
    auto n = program_for(seed, 100, cfg).steps.size();
    EXPECT_GE(n, 15u);
    EXPECT_LE(n, 30u);
  }
}

TEST(GeneratorTest, ShrinksAreSmallerWellFormedAndDeterministic) {
  int checked = 0;
  for (std::uint64_t seed = 0; seed < 120; ++seed) {
    Program p = program_for(seed);
    auto candidates = shrink_candidates(p);
    EXPECT_EQ(candidates, shrink_candidates(p)) << "seed " << seed;
    if (p.steps.size() > 1) {
      EXPECT_FALSE(candidates.empty());
    }
    for (const auto& c : candidates) {
      std::string why;
      ASSERT_TRUE(well_formed(c, &why)) << why << "\nfrom\n" << describe(p) << "shrunk to\n" << describe(c);
      ASSERT_LT(complexity(c), complexity(p)) << describe(p) << "shrunk to\n" << describe(c);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(GeneratorTest, ShrinkingReachesAMinimalProgram) {
  // A "property" failing whenever a backward is present shrinks to a leaf, a reduction and the backward.
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    Program p = program_for(seed);
    auto has_backward = [](const Program& q) {
      return std::any_of(q.steps.begin(), q.steps.end(), [](const Step& s) { return s.op == OpId::Backward; });
    };
    if (!has_backward(p)) continue;
    bool progress = true;
    while (progress) {
      progress = false;
      for (const auto& c : shrink_candidates(p))
        if (has_backward(c)) {
          p = c;
          progress = true;
          break;
        }
    }
    EXPECT_LE(p.steps.size(), 4u) << describe(p);
    EXPECT_EQ(p.steps.back().op, OpId::Backward);
  }
}

TEST(GeneratorTest, RemoveStepTakesDependentsAndRenumbers) {
  Program p;
  p.steps.push_back(Step{OpId::Zeros, {}, {}, true});       // 0
  p.steps.push_back(Step{OpId::Ones, {}, {}, true});        // 1
  p.steps.push_back(Step{OpId::Neg, {0}, {}, true});        // 2 <- 0
  p.steps.push_back(Step{OpId::Add, {1, 1}, {}, true});     // 3 <- 1
  p.steps.push_back(Step{OpId::Mul, {2, 3}, {}, true});     // 4 <- 2, 3
  p.steps.push_back(Step{OpId::Exp, {3}, {}, true});        // 5 <- 3
  Program q = remove_step(p, 2);
  ASSERT_EQ(q.steps.size(), 4u);
  EXPECT_EQ(q.steps[2].op, OpId::Add);
  EXPECT_EQ(q.steps[2].inputs, (std::vector<int>{1, 1}));
  EXPECT_EQ(q.steps[3].op, OpId::Exp);
  EXPECT_EQ(q.steps[3].inputs, (std::vector<int>{2}));
  EXPECT_EQ(remove_step(p, 0).steps.size(), 3u);
}

TEST(StridesTest, MirrorsPyTorch) {
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (Dims{3, 3, 1}));
  EXPECT_EQ(channels_last_strides({2, 3, 4, 5}), (Dims{60, 1, 15, 3}));
  EXPECT_EQ(channels_last_3d_strides({2, 3, 4, 5, 6}), (Dims{360, 1, 90, 18, 3}));
  // infer_dense_strides' own example: stride-0 dims keep their place.
  EXPECT_EQ(infer_dense_strides({6, 5, 4, 3, 2}, {6, 0, 120, 0, 1}), (Dims{6, 36, 180, 2, 1}));
  EXPECT_EQ(infer_dense_strides({2, 3, 4}, {1, 4, 24}), (Dims{1, 2, 6}));
  EXPECT_EQ(infer_dense_strides({3, 2}, {1, 0}), (Dims{2, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense({2, 3}, {1, 2}));
  EXPECT_FALSE(is_non_overlapping_and_dense({2, 3}, {0, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense({1, 3}, {7, 1}));
  // N111: ambiguous, PyTorch says not channels_last-like.
  EXPECT_FALSE(is_channels_last_strides({4, 1, 1, 1}, {1, 1, 1, 1}));
  EXPECT_TRUE(is_channels_last_strides({2, 3, 4, 5}, {60, 1, 15, 3}));
  EXPECT_TRUE(is_contiguous({2, 1, 3}, {3, 99, 1}));
  EXPECT_TRUE(is_channels_last_contiguous({2, 1, 4, 5}, {20, 1, 5, 1}));
  EXPECT_TRUE(has_internal_overlap({2, 3}, {1, 1}));
  EXPECT_FALSE(has_internal_overlap({2, 3}, {3, 1}));
}

TEST(LayoutTest, KindsHaveTheirShape) {
  Rng rng(7);
  int ambiguous_cl = 0, cl = 0;
  for (int i = 0; i < 3000; ++i) {
    for (LayoutKind kind : kAllLayoutKinds) {
      LayoutSpec l = random_layout(rng, kind);
      std::ostringstream os;
      showValue(l, os);
      ASSERT_EQ(l.sizes.size(), l.strides.size()) << os.str();
      ASSERT_LE(l.sizes.size(), 5u) << os.str();
      ASSERT_LE(numel(l.sizes), kMaxLayoutNumel) << os.str();
      ASSERT_GE(l.offset, 0) << os.str();
      for (auto s : l.strides) ASSERT_GE(s, 0) << os.str();
      switch (kind) {
        case LayoutKind::Contiguous: ASSERT_TRUE(is_contiguous(l.sizes, l.strides)) << os.str(); break;
        case LayoutKind::ChannelsLast:
          ASSERT_TRUE(is_channels_last_contiguous(l.sizes, l.strides)) << os.str();
          ++cl;
          ambiguous_cl += is_contiguous(l.sizes, l.strides);
          break;
        case LayoutKind::ChannelsLast3d: ASSERT_TRUE(is_channels_last_3d_contiguous(l.sizes, l.strides)) << os.str(); break;
        case LayoutKind::Permuted: ASSERT_TRUE(is_non_overlapping_and_dense(l.sizes, l.strides)) << os.str(); break;
        case LayoutKind::Sliced: ASSERT_FALSE(l.offset == 0 && is_non_overlapping_and_dense(l.sizes, l.strides)) << os.str(); break;
        case LayoutKind::Expanded:
        case LayoutKind::Overlapping: ASSERT_TRUE(has_internal_overlap(l.sizes, l.strides)) << os.str(); break;
        case LayoutKind::ZeroSize: ASSERT_EQ(numel(l.sizes), 0) << os.str(); break;
        case LayoutKind::SizeOne:
          ASSERT_TRUE(l.sizes.empty() || std::count(l.sizes.begin(), l.sizes.end(), 1) > 0) << os.str();
          break;
      }
    }
  }
  // Ambiguous shapes (channels_last and contiguous at once) must be common: bugs hide there.
  EXPECT_GT(ambiguous_cl, cl / 5);
}

TEST(LayoutTest, ViewsStayInsideTheirStorage) {
  Rng rng(11);
  for (int i = 0; i < 5000; ++i) {
    std::int64_t n = rng.range(0, 60);
    LayoutSpec l = random_view_within(rng, n);
    ASSERT_LE(program::storage_extent(l.sizes, l.strides, l.offset), std::max<std::int64_t>(n, l.offset));
    if (n > 0) {
      ASSERT_LE(program::storage_extent(l.sizes, l.strides, l.offset), n);
    }
  }
}

TEST(LayoutTest, RandomLayoutForAShapeAtTheCapStaysWithinTheStorageAProgramHolds) {
  Rng rng(6);
  const std::int64_t cap = program::kMaxNumel;
  for (const Dims& sizes : {Dims{cap}, Dims{cap - 1}, Dims{4, 16, 16, 32, cap / 32768}, Dims{1, cap}})
    for (int i = 0; i < 300; ++i) {
      const LayoutSpec l = random_layout_for(rng, sizes);
      ASSERT_EQ(l.sizes, sizes);
      ASSERT_LE(program::storage_extent(l.sizes, l.strides, l.offset), cap)
          << program::render_ints(l.strides) << " offset " << l.offset;
    }
}

TEST(LayoutTest, RandomLayoutForKeepsSizes) {
  Rng rng(5);
  for (int i = 0; i < 2000; ++i) {
    Dims sizes = random_shape(rng);
    LayoutSpec l = random_layout_for(rng, sizes);
    ASSERT_EQ(l.sizes, sizes);
    ASSERT_EQ(l.strides.size(), sizes.size());
  }
}

// A builder to append steps to and ask what it admits next.
class StepBuilderTest : public ::testing::Test {
 protected:
  int factory(OpId op, program::DType dtype, bool requires_grad, std::vector<std::int64_t> sizes) {
    program::Attrs a;
    a.sizes = std::move(sizes);
    a.dtype = dtype;
    a.requires_grad = requires_grad;
    return g.append({op, {}, a, true});
  }
  int append(OpId op, std::vector<int> inputs, const program::Attrs& a = {}) {
    return g.append({op, std::move(inputs), a, true});
  }
  bool admits(OpId op, std::vector<int> inputs, const program::Attrs& a = {}) {
    return g.admits({op, std::move(inputs), a, true});
  }
  int ones(std::vector<std::int64_t> sizes) { return factory(OpId::Ones, program::DType::Float32, false, std::move(sizes)); }

  Rng rng{3};
  GenConfig cfg;
  StepBuilder g{rng, cfg, 32};
};

// A quotient amplifies a rounded operand where a value is zero: a rounded numerator (a mean that cancels to 0
// on one backend and 2e-9 on the other) over a zero is NaN against inf. The generator makes no division with a
// rounded operand on either side, nor by a zero scalar; an exact one divides as any op.
TEST_F(StepBuilderTest, NoQuotientOfARoundedOperand) {
  const int exact = ones({3});
  const int rounded = append(OpId::Exp, {exact});
  EXPECT_TRUE(admits(OpId::Div, {exact, exact}));
  EXPECT_FALSE(admits(OpId::Div, {rounded, exact}));
  EXPECT_FALSE(admits(OpId::Div, {exact, rounded}));
  program::Attrs zero;
  zero.scalar = {program::Scalar::Kind::Bool, 0};
  EXPECT_FALSE(admits(OpId::DivScalar, {rounded}, zero));
  EXPECT_TRUE(admits(OpId::DivScalar, {exact}, zero));
}

// A float64 leaf's gradient computed in float32 (through to(float32), or a float32 in-place op of a float64
// operand) is judged at float64's tolerance in its .grad: a rounded root (tanh's libm against SLEEF, a sum's
// order) makes a false alarm there, so the generator runs no backward from one. In one dtype, it does.
TEST_F(StepBuilderTest, NoRoundedGradientIntoAMorePreciseLeaf) {
  program::Attrs to32;
  to32.dtype = program::DType::Float32;
  const int x64 = factory(OpId::Ones, program::DType::Float64, true, {3});
  const int narrowed = append(OpId::Tanh, {append(OpId::To, {x64}, to32)});
  EXPECT_FALSE(admits(OpId::Backward, {append(OpId::Sum, {narrowed})}));
  const int x32 = factory(OpId::Ones, program::DType::Float32, true, {3});
  EXPECT_TRUE(admits(OpId::Backward, {append(OpId::Sum, {append(OpId::Tanh, {x32})})}));

  // a.mul_(z): z's gradient is a float32 sum of a's products, for a float64 z.
  const int z64 = factory(OpId::Ones, program::DType::Float64, true, {});
  EXPECT_FALSE(admits(OpId::Backward, {append(OpId::Mean, {append(OpId::Mul_, {ones({3, 3}), z64})})}));
  const int z32 = factory(OpId::Ones, program::DType::Float32, true, {});
  EXPECT_TRUE(admits(OpId::Backward, {append(OpId::Mean, {append(OpId::Mul_, {ones({3, 3}), z32})})}));
}

// A value past the small range, held by an operand rather than read as a scalar, scales a rounded operand's
// last-bit error as much: mul(cos-rounded, full([], -2^31)) is a false alarm once a mean cancels it.
TEST_F(StepBuilderTest, NoRoundedOperandScaledByALargeOne) {
  const int rounded = append(OpId::Exp, {ones({3})});
  program::Attrs small, large;
  small.scalar = {program::Scalar::Kind::Int, 2};
  large.scalar = {program::Scalar::Kind::Int, -2147483648.0};
  const int two = append(OpId::Full, {}, small);
  const int big = append(OpId::Full, {}, large);
  EXPECT_TRUE(admits(OpId::Mul, {rounded, two}));
  EXPECT_FALSE(admits(OpId::Mul, {rounded, big}));
  EXPECT_FALSE(admits(OpId::Mul, {big, rounded}));
  // What a large value makes is large too.
  EXPECT_FALSE(admits(OpId::Mul, {rounded, append(OpId::Mul, {big, two})}));
}

// exp'd values less their sum cancel where one value dominates the sum: a difference of rounded operands of one
// history is a false alarm there. Of independent ones, or of an exact one, it is judged.
TEST_F(StepBuilderTest, NoSumOrDifferenceOfRoundedValuesOfOneHistory) {
  const int x = append(OpId::Exp, {ones({3})});
  const int total = append(OpId::Sum, {x});
  EXPECT_FALSE(admits(OpId::Sub, {x, total}));
  EXPECT_FALSE(admits(OpId::Sub_, {x, total}));
  EXPECT_FALSE(admits(OpId::Add, {total, x}));
  const int other = append(OpId::Exp, {ones({3})});
  EXPECT_TRUE(admits(OpId::Sub, {other, total}));
  EXPECT_TRUE(admits(OpId::Sub, {ones({3}), total}));
}

}  // namespace
}  // namespace parity::generators
