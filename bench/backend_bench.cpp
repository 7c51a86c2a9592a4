// impl vs LibTorch on the same work, in one binary and one run: the scenarios of issue 14's kernel table. Each
// benchmark executes steps of a program through a backend's Session (no observation), so both sides pay the same
// harness cost. Benchmarks are named SCENARIO/impl and SCENARIO/libtorch; bench/kernels.py pairs them, computes
// the ratios, checks them against the goals and writes the table, JSON and chart.
//
// A scenario that moves bytes reports `bytes_per_iteration` (bytes read + bytes written by one iteration, counting
// each tensor's elements once) so that the driver can state it in GB/s; one that computes (mm) reports
// `flops_per_iteration` for GFLOP/s; the others are read as time.
//
// Ceilings (issue 33), measured in the same run so that the table says how far each side is from the machine's
// limit rather than from a number taken on another day under another load: SCENARIO/memcpy, for each scenario
// that moves bytes, copies half its bytes with std::memcpy (so it too reads + writes bytes_per_iteration), and
// peak_fma/machine runs fused multiply-adds on registers only at the widest vectors the CPU has.
//
// `parity_bench --device cuda` runs issue 30's device scenarios instead: impl's cuda against LibTorch-CUDA, each
// iteration waited for (both libraries' work, one device), timed by the wall clock; the ceiling of a scenario that
// moves bytes is a cudaMemcpy device to device of half of them, and there is no FMA peak. Without a device (impl's
// or LibTorch's) it says so and exits with status 7, as `parity fuzz --device cuda` does; listing works anyway.
#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "impl_backend/backend.h"
#include "impl_backend/device_ceiling.h"
#include "oracle/torch_backend.h"
#include "program/program.h"

namespace parity::bench {
namespace {

using program::Attrs;
using program::OpId;
using program::Step;

Step rand_step(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides, bool rg = false,
               program::Device device = program::Device::CPU) {
  Step s;
  s.op = OpId::Rand;
  s.attrs.sizes = sizes;
  s.attrs.strides = strides;
  s.attrs.requires_grad = rg;
  s.attrs.seed = 7;
  s.attrs.device = device;
  return s;
}

Step cuda_rand(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides) {
  return rand_step(sizes, strides, false, program::Device::CUDA);
}

Step op_step(OpId op, std::vector<int> inputs, Attrs attrs = {}) {
  Step s;
  s.op = op;
  s.inputs = std::move(inputs);
  s.attrs = attrs;
  return s;
}

Attrs memory_format(program::MemoryFormat f) {
  Attrs a;
  a.memory_format = f;
  return a;
}

Attrs scalar(double v) {
  Attrs a;
  a.scalar = {program::Scalar::Kind::Float, v};
  return a;
}

struct Scenario {
  std::string name;            // the driver's key: keep bench/kernels.py's SCENARIOS in step
  std::vector<Step> setup;     // run once per session; value ids 0..setup.size()-1
  std::vector<Step> measured;  // one iteration; step k writes value id setup.size() + k
  std::int64_t bytes = 0;      // bytes read + written per iteration; 0 for a scenario read as time
  std::int64_t flops = 0;      // floating-point operations per iteration (a fused multiply-add is 2); 0: none
};

constexpr std::int64_t kFloat = 4;

std::vector<Scenario> scenarios() {
  using MF = program::MemoryFormat;
  std::vector<Scenario> out;
  // Small-op overhead: what a campaign's steps mostly are.
  out.push_back({"clone_1_float", {rand_step({1}, {1})}, {op_step(OpId::Clone, {0}, memory_format(MF::Preserve))}});
  out.push_back({"detach", {rand_step({1}, {1}, true)}, {op_step(OpId::Detach, {0})}});
  out.push_back({"clone_requires_grad",
                 {rand_step({1}, {1}, true)},
                 {op_step(OpId::Clone, {0}, memory_format(MF::Preserve))}});
  // x.clone()*2 + x.clone()*3, summed, backward: the autograd engine's round trip (x.grad accumulates).
  out.push_back({"clone_mul_add_sum_backward",
                 {rand_step({5}, {1}, true)},
                 {op_step(OpId::Clone, {0}, memory_format(MF::Preserve)),  // 1
                  op_step(OpId::MulScalar, {1}, scalar(2.0)),              // 2
                  op_step(OpId::Clone, {0}, memory_format(MF::Preserve)),  // 3
                  op_step(OpId::MulScalar, {3}, scalar(3.0)),              // 4
                  op_step(OpId::Add, {2, 4}),                              // 5
                  op_step(OpId::Sum, {5}),                                 // 6
                  op_step(OpId::Backward, {6})}});
  // Each iteration's clone replaces the last one's in the session, which frees it: a caching allocator can hand
  // the same block back; without one, every iteration pays fresh pages.
  constexpr std::int64_t k64MiB = (64 << 20) / kFloat;
  out.push_back({"clone_64mib",
                 {rand_step({k64MiB}, {1})},
                 {op_step(OpId::Clone, {0}, memory_format(MF::Preserve))},
                 2 * k64MiB * kFloat});
  // 8x64x56x56 in channels_last strides (NHWC in memory), cloned to NCHW.
  constexpr std::int64_t N = 8, C = 64, H = 56, W = 56;
  out.push_back({"channels_last_to_contiguous",
                 {rand_step({N, C, H, W}, {H * W * C, 1, W * C, C})},
                 {op_step(OpId::Clone, {0}, memory_format(MF::Contiguous))},
                 2 * N * C * H * W * kFloat});
  constexpr std::int64_t T = 2048;
  out.push_back({"transpose_contiguous",
                 {rand_step({T, T}, {1, T})},
                 {op_step(OpId::Contiguous, {0}, memory_format(MF::Contiguous))},
                 2 * T * T * kFloat});
  out.push_back({"add_broadcast_256",
                 {rand_step({256, 256}, {256, 1}), rand_step({256}, {1})},
                 {op_step(OpId::Add, {0, 1})}});
  out.push_back({"mm_256",
                 {rand_step({256, 256}, {256, 1}), rand_step({256, 256}, {256, 1})},
                 {op_step(OpId::Mm, {0, 1})},
                 0,
                 2 * std::int64_t{256} * 256 * 256});
  // Reads 4 MiB, writes one float.
  out.push_back({"sum_1m", {rand_step({1 << 20}, {1})}, {op_step(OpId::Sum, {0})}, (1 << 20) * kFloat + kFloat});
  return out;
}

// Issue 30's device table: large enough that launches do not count, each as the issue names it.
std::vector<Scenario> device_scenarios() {
  using MF = program::MemoryFormat;
  std::vector<Scenario> out;
  constexpr std::int64_t k1GiB = (std::int64_t{1} << 30) / kFloat;
  out.push_back({"clone_1gib", {cuda_rand({k1GiB}, {1})}, {op_step(OpId::Clone, {0}, memory_format(MF::Preserve))},
                 2 * k1GiB * kFloat});
  constexpr std::int64_t R = 16384;
  out.push_back({"add_broadcast_16k",
                 {cuda_rand({R, R}, {R, 1}), cuda_rand({R}, {1})},
                 {op_step(OpId::Add, {0, 1})},
                 (2 * R * R + R) * kFloat});
  constexpr std::int64_t k256M = std::int64_t{1} << 28;
  out.push_back({"sum_256m", {cuda_rand({k256M}, {1})}, {op_step(OpId::Sum, {0})}, (k256M + 1) * kFloat});
  constexpr std::int64_t M = 4096;
  out.push_back({"mm_4096",
                 {cuda_rand({M, M}, {M, 1}), cuda_rand({M, M}, {M, 1})},
                 {op_step(OpId::Mm, {0, 1})},
                 0,
                 2 * M * M * M});
  return out;
}

bool g_cuda = false;  // --device cuda: device_scenarios(), each iteration waited for

enum class Side { Impl, Libtorch };

const char* side_name(Side side) { return side == Side::Impl ? "impl" : "libtorch"; }

judge::Backend& backend(Side side) {
  static const std::unique_ptr<judge::Backend> impl = impl_backend::make_impl_backend();
  static const std::unique_ptr<judge::Backend> torch = oracle::make_torch_backend();
  return side == Side::Impl ? *impl : *torch;
}

// One session per scenario and side, set up at its first use and kept for the run: Google Benchmark calls a
// benchmark's function several times per repetition (while it sizes the iteration count), and the setup of the
// large scenarios costs more than their measurement.
judge::Session& session_for(const Scenario& sc, Side side) {
  static std::map<std::pair<std::string, Side>, std::unique_ptr<judge::Session>> sessions;
  auto& slot = sessions[{sc.name, side}];
  if (!slot) {
    slot = backend(side).start();
    for (std::size_t i = 0; i < sc.setup.size(); ++i) slot->execute(sc.setup[i], static_cast<int>(i));
  }
  return *slot;
}

// The counters the driver reads a scenario's rate from, the same on every side and in its memcpy ceiling.
void report_work(benchmark::State& state, const Scenario& sc) {
  if (sc.bytes > 0) {
    state.SetBytesProcessed(state.iterations() * sc.bytes);
    state.counters["bytes_per_iteration"] = benchmark::Counter(static_cast<double>(sc.bytes));
  }
  if (sc.flops > 0) state.counters["flops_per_iteration"] = benchmark::Counter(static_cast<double>(sc.flops));
}

void run_scenario(benchmark::State& state, const Scenario& sc, Side side) {
  try {
    judge::Session& session = session_for(sc, side);
    const int first = static_cast<int>(sc.setup.size());
    if (g_cuda) impl_backend::cuda_synchronize();  // the setup's kernels are not the first iteration's
    for (auto _ : state) {
      for (std::size_t k = 0; k < sc.measured.size(); ++k)
        session.execute(sc.measured[k], first + static_cast<int>(k));
      if (g_cuda) impl_backend::cuda_synchronize();
    }
  } catch (const std::exception& e) {
    // A refused step is a result the table must show (ERROR), not a crash that loses every other row.
    state.SkipWithError((std::string(side_name(side)) + " raised: " + e.what()).c_str());
    return;
  }
  report_work(state, sc);
}

// The ceiling for moving a scenario's bytes: std::memcpy of half of them (it reads as many as it writes), between
// buffers allocated and touched once per scenario and kept for the run, as the sessions are, so that no page
// fault lands in the timed loop.
void run_cuda_memcpy(benchmark::State& state, const Scenario& sc) {
  try {
    static std::map<std::string, std::unique_ptr<impl_backend::CudaCopyCeiling>> ceilings;
    auto& slot = ceilings[sc.name];
    if (!slot) slot = std::make_unique<impl_backend::CudaCopyCeiling>(static_cast<std::size_t>(sc.bytes / 2));
    impl_backend::cuda_synchronize();
    for (auto _ : state) {
      slot->copy();
      impl_backend::cuda_synchronize();
    }
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("memcpy raised: ") + e.what()).c_str());
    return;
  }
  report_work(state, sc);
}

void run_memcpy(benchmark::State& state, const Scenario& sc) {
  if (g_cuda) return run_cuda_memcpy(state, sc);
  static std::map<std::string, std::pair<std::vector<unsigned char>, std::vector<unsigned char>>> buffers;
  const auto half = static_cast<std::size_t>(sc.bytes / 2);
  auto& slot = buffers[sc.name];
  if (slot.first.size() != half) slot = {std::vector<unsigned char>(half, 1), std::vector<unsigned char>(half, 2)};
  unsigned char* dst = slot.second.data();
  const unsigned char* src = slot.first.data();
  for (auto _ : state) {
    benchmark::DoNotOptimize(dst);
    std::memcpy(dst, src, half);
    benchmark::ClobberMemory();
  }
  report_work(state, sc);
}

// The core's peak: fused multiply-adds on registers only, kFmaChains independent chains (an FMA's latency is 4
// cycles and a core issues up to 2 a cycle, so 8 chains keep it busy; 12 leave room), kFmaRounds rounds per
// benchmark iteration. acc * m + c with m < 1 settles at c / (1 - m) = 1: no overflow, no subnormals.
constexpr int kFmaChains = 12;
constexpr std::int64_t kFmaRounds = 1 << 14;
constexpr float kFmaMul = 0.999f, kFmaAdd = 0.001f;

// This file is built for the baseline ISA; these two carry their own target, and run only where the CPU has it.
__attribute__((target("avx512f"))) float fma_loop_avx512(std::int64_t rounds) {
  const __m512 m = _mm512_set1_ps(kFmaMul), c = _mm512_set1_ps(kFmaAdd);
  __m512 acc[kFmaChains];
  for (int k = 0; k < kFmaChains; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  for (std::int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int k = 0; k < kFmaChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, c);
  }
  __m512 total = acc[0];
  for (int k = 1; k < kFmaChains; ++k) total = _mm512_add_ps(total, acc[k]);
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its own header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(std::int64_t rounds) {
  const __m256 m = _mm256_set1_ps(kFmaMul), c = _mm256_set1_ps(kFmaAdd);
  __m256 acc[kFmaChains];
  for (int k = 0; k < kFmaChains; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  for (std::int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int k = 0; k < kFmaChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, c);
  }
  __m256 total = acc[0];
  for (int k = 1; k < kFmaChains; ++k) total = _mm256_add_ps(total, acc[k]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, total);
  float sum = 0;
  for (float lane : lanes) sum += lane;
  return sum;
}

float fma_loop_scalar(std::int64_t rounds) {
  float acc[kFmaChains];
  for (int k = 0; k < kFmaChains; ++k) acc[k] = static_cast<float>(k);
  for (std::int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int k = 0; k < kFmaChains; ++k) acc[k] = std::fma(acc[k], kFmaMul, kFmaAdd);
  }
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

void run_peak_fma(benchmark::State& state) {
  float (*loop)(std::int64_t) = fma_loop_scalar;
  int lanes = 1;
  const char* isa = "scalar";
  if (__builtin_cpu_supports("avx512f")) {
    loop = fma_loop_avx512;
    lanes = 16;
    isa = "avx512f";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    loop = fma_loop_avx2;
    lanes = 8;
    isa = "avx2+fma";
  }
  // Through a variable the compiler cannot see into: the round count is not a constant it could fold the loop with.
  std::int64_t rounds = kFmaRounds;
  benchmark::DoNotOptimize(rounds);
  for (auto _ : state) {
    float result = loop(rounds);
    benchmark::DoNotOptimize(result);
  }
  state.SetLabel(isa);
  const auto flops = static_cast<double>(2 * kFmaRounds * kFmaChains * lanes);
  state.counters["flops_per_iteration"] = benchmark::Counter(flops);
}

void register_scenarios() {
  static const std::vector<Scenario> all = g_cuda ? device_scenarios() : scenarios();
  // The host's CPU time says nothing of a device's: its benchmarks are timed by the wall clock.
  auto timed = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond);
    if (g_cuda) b->UseRealTime();
  };
  for (const Scenario& sc : all) {
    for (Side side : {Side::Impl, Side::Libtorch})
      timed(benchmark::RegisterBenchmark((sc.name + "/" + side_name(side)).c_str(),
                                         [&sc, side](benchmark::State& state) { run_scenario(state, sc, side); }));
    if (sc.bytes > 0)
      timed(benchmark::RegisterBenchmark((sc.name + "/memcpy").c_str(),
                                         [&sc](benchmark::State& state) { run_memcpy(state, sc); }));
  }
  if (!g_cuda) benchmark::RegisterBenchmark("peak_fma/machine", run_peak_fma)->Unit(benchmark::kMicrosecond);
}

// Takes `--device cpu|cuda` out of argv (Google Benchmark refuses flags it does not know). Returns false on a bad
// value.
bool take_device_flag(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg != "--device") {
      argv[out++] = argv[i];
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (value != "cpu" && value != "cuda") return false;
    g_cuda = value == "cuda";
  }
  argc = out;
  return true;
}

bool listing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--benchmark_list_tests", 0) == 0) return true;
  return false;
}
}  // namespace
}  // namespace parity::bench

int main(int argc, char** argv) {
  if (!parity::bench::take_device_flag(argc, argv)) {
    std::fprintf(stderr, "parity_bench: --device takes cpu or cuda\n");
    return 2;
  }
  if (parity::bench::g_cuda && !parity::bench::listing(argc, argv)) {
    const int impl = parity::impl_backend::cuda_device_count(), torch = parity::oracle::cuda_device_count();
    if (impl == 0 || torch == 0) {
      std::fprintf(stderr,
                   "parity_bench --device cuda: no CUDA device to measure (impl sees %d, LibTorch sees %d; LibTorch "
                   "needs a build with PARITY_ORACLE_CUDA, as ci/device_check.sh makes)\n",
                   impl, torch);
      return 7;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  parity::bench::register_scenarios();
  // The oracle sets LibTorch to one intra-op thread (oracle/torch_backend.cpp), impl's only mode: 1 thread each.
  benchmark::AddCustomContext("libtorch_version", parity::oracle::torch_version());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
