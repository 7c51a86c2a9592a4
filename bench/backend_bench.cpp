// impl vs LibTorch on the same steps, in one binary and one run: each benchmark executes one step of a program
// through a backend's Session (no observation), so both sides pay the same harness cost. Ratios are printed by
// Google Benchmark as the impl/libtorch pairs of each scenario (compare their times).
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>

#include "impl_backend/backend.h"
#include "oracle/torch_backend.h"
#include "program/program.h"

namespace parity::bench {
namespace {

using program::Attrs;
using program::OpId;
using program::Step;

Step rand_step(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides, bool rg) {
  Step s;
  s.op = OpId::Rand;
  s.attrs.sizes = sizes;
  s.attrs.strides = strides;
  s.attrs.requires_grad = rg;
  s.attrs.seed = 7;
  return s;
}

Step unary(OpId op, int input, Attrs attrs = {}) {
  Step s;
  s.op = op;
  s.inputs = {input};
  s.attrs = attrs;
  return s;
}

// Runs `setup` once, then times `measured` (whose value id is setup.size()).
void run_scenario(benchmark::State& state, program::Backend& backend, const std::vector<Step>& setup,
                  const Step& measured) {
  auto session = backend.start();
  for (std::size_t i = 0; i < setup.size(); ++i) session->execute(setup[i], static_cast<int>(i));
  const int id = static_cast<int>(setup.size());
  for (auto _ : state) session->execute(measured, id);
}

std::unique_ptr<program::Backend> backend_for(int which) {
  return which == 0 ? impl_backend::make_impl_backend() : oracle::make_torch_backend();
}

void label(benchmark::State& state) { state.SetLabel(state.range(0) == 0 ? "impl" : "libtorch"); }

void BM_CloneContiguous(benchmark::State& state) {
  auto b = backend_for(static_cast<int>(state.range(0)));
  Attrs mf;
  mf.memory_format = program::MemoryFormat::Preserve;
  run_scenario(state, *b, {rand_step({64, 64}, {64, 1}, false)}, unary(OpId::Clone, 0, mf));
  label(state);
}

void BM_CloneTransposedToContiguous(benchmark::State& state) {
  auto b = backend_for(static_cast<int>(state.range(0)));
  Attrs mf;
  mf.memory_format = program::MemoryFormat::Contiguous;
  run_scenario(state, *b, {rand_step({64, 64}, {1, 64}, false)}, unary(OpId::Clone, 0, mf));
  label(state);
}

void BM_AddBroadcast(benchmark::State& state) {
  auto b = backend_for(static_cast<int>(state.range(0)));
  Step add;
  add.op = OpId::Add;
  add.inputs = {0, 1};
  run_scenario(state, *b, {rand_step({64, 64}, {64, 1}, false), rand_step({64}, {1}, false)}, add);
  label(state);
}

void BM_ViewChain(benchmark::State& state) {
  auto b = backend_for(static_cast<int>(state.range(0)));
  Attrs t;
  t.dim = 0;
  t.dim1 = 1;
  run_scenario(state, *b, {rand_step({64, 64}, {64, 1}, true)}, unary(OpId::Transpose, 0, t));
  label(state);
}

void BM_SumBackward(benchmark::State& state) {
  // Each iteration builds mul -> sum and runs backward, retaining nothing: the autograd engine's round trip.
  auto b = backend_for(static_cast<int>(state.range(0)));
  auto session = b->start();
  session->execute(rand_step({32, 32}, {32, 1}, true), 0);
  Attrs k;
  k.scalar = {program::Scalar::Kind::Float, 2.0};
  for (auto _ : state) {
    session->execute(unary(OpId::MulScalar, 0, k), 1);
    session->execute(unary(OpId::Sum, 1), 2);
    session->execute(unary(OpId::Backward, 2), 3);
  }
  label(state);
}

BENCHMARK(BM_CloneContiguous)->Arg(0)->Arg(1);
BENCHMARK(BM_CloneTransposedToContiguous)->Arg(0)->Arg(1);
BENCHMARK(BM_AddBroadcast)->Arg(0)->Arg(1);
BENCHMARK(BM_ViewChain)->Arg(0)->Arg(1);
BENCHMARK(BM_SumBackward)->Arg(0)->Arg(1);

}  // namespace
}  // namespace parity::bench

BENCHMARK_MAIN();
