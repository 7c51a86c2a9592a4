// Campaign throughput, in one run on one machine: cases per second of the same generated programs evaluated
// in this process (no isolation: the limit), by persistent workers (one, then one per core), by a child forked per
// case (the old mode), and by workers whose impl side is `parity serve --backend impl` behind the backend protocol
// (docs/backend-protocol.md); with --python, also judged by PyTorch's Python API through the protocol
// (backends/python/torch_backend.py); and by workers with coverage guidance on (engine/corpus.h), whose cost is
// held to a fifth of the unguided campaign's cases per second. Prints a table with the ratios the engine is held to
// and writes them as JSON.
//
//   parity_throughput_bench [--seconds S] [--seed N] [--json FILE] [--parity BIN] [--python PY] [--device cuda]
//
// --device cuda measures issue 30's three campaigns on a GPU machine instead, each by one worker per core: on the
// CPU (cpu_N), on cuda judged by LibTorch-CUDA (cuda_N) and on cuda judged by impl on the CPU (cuda_impl_cpu_N).
// It prints their cases/s, cuda's per worker against the goal (8,000 cases/s on 16 workers) and each cuda
// mode against the CPU's. Without a device for both backends it says why and exits 7, as `parity fuzz` does.
//
// The isolated modes run first: forking workers from a process that already holds LibTorch state (the in-process
// mode's) is what the engine avoids. Shrinking is off in every mode, and guidance in all but its own, so that each
// measures evaluation alone.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/campaign.h"
#include "engine/case_seed.h"
#include "engine/device_probe.h"
#include "engine/evaluate.h"
#include "engine/worker_pool.h"
#include "files/output_file.h"

namespace parity::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Mode {
  std::string name;
  std::uint64_t cases = 0;
  double seconds = 0;
  double rate() const { return seconds > 0 ? static_cast<double>(cases) / seconds : 0; }
};

struct OnDevice {
  bool cuda = false;
  reports::Oracle oracle = reports::Oracle::LibTorch;
};

Mode campaign(const std::string& name, engine::Isolation isolation, int jobs, double seconds, std::uint64_t seed,
              const fs::path& work, const engine::EvalSides& sides = {}, double guided_share = 0,
              OnDevice device = {}) {
  engine::CampaignConfig c;
  c.generator.cuda = device.cuda;
  c.oracle = device.oracle;
  c.sides = sides;
  c.guided_share = guided_share;
  c.seed = seed;
  c.seconds = seconds;
  c.isolation = isolation;
  c.jobs = jobs;
  c.shrink_share = 0;
  c.out = work / name;
  engine::prepare_output(c.out, true);
  const engine::CampaignResult r = engine::run_campaign(c, reports::KnownDivergences{});
  return {name, r.summary.cases, r.summary.seconds};
}

// The same loop a campaign runs, without a process boundary: generate case k, evaluate it, next.
Mode in_process(double seconds, std::uint64_t seed) {
  Mode m{"in_process"};
  const auto start = Clock::now();
  const generators::GenConfig config;
  for (std::uint64_t k = 0;; ++k) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= seconds) {
      m.seconds = elapsed;
      break;
    }
    (void)engine::evaluate_in_process(engine::generate_case(seed, k, config).value());
    ++m.cases;
  }
  return m;
}

void write_json(const fs::path& path, const nlohmann::json& out) {
  files::write_text_file_atomically(path, out.dump(2) + "\n", "the throughput results");
  std::printf("written: %s\n", path.string().c_str());
}

void print_modes(const std::vector<Mode>& modes) {
  std::printf("%-16s %10s %10s %12s\n", "mode", "cases", "seconds", "cases/s");
  for (const auto& m : modes)
    std::printf("%-16s %10llu %10.2f %12.1f\n", m.name.c_str(), static_cast<unsigned long long>(m.cases), m.seconds,
                m.rate());
}

// Issue 30's goal for campaigns on cuda: 8,000 cases/s on 16 workers, held per worker.
constexpr double kCudaCasesPerWorker = 8000.0 / 16;

int run_on_device(double seconds, std::uint64_t seed, const fs::path& json_path) {
  // Asked in a child: this process forks the campaigns' workers, and CUDA does not survive a fork.
  const engine::CudaProbe probe = engine::probe_cuda();
  if (auto why = probe.refusal(reports::Oracle::LibTorch)) {
    std::fprintf(stderr, "parity_throughput_bench --device cuda: needs a CUDA device on both backends: %s\n",
                 why->c_str());
    return 7;
  }
  const int cores = engine::usable_cores();
  const std::string n = std::to_string(cores);
  const fs::path work = fs::temp_directory_path() / ("parity-throughput-" + std::to_string(::getpid()));
  std::fprintf(stderr, "throughput on cuda: %.0f s per mode, seed %llu, %d workers\n", seconds,
               static_cast<unsigned long long>(seed), cores);
  std::vector<Mode> modes;
  modes.push_back(campaign("cpu_" + n, engine::Isolation::Workers, cores, seconds, seed, work));
  modes.push_back(campaign("cuda_" + n, engine::Isolation::Workers, cores, seconds, seed, work, {}, 0, {true}));
  modes.push_back(campaign("cuda_impl_cpu_" + n, engine::Isolation::Workers, cores, seconds, seed, work, {}, 0,
                           {true, reports::Oracle::ImplCpu}));
  std::error_code ec;
  fs::remove_all(work, ec);
  print_modes(modes);
  const Mode &cpu = modes[0], &cuda = modes[1], &impl_cpu = modes[2];
  nlohmann::json ratios = nlohmann::json::object();
  const double per_worker = cuda.rate() / cores;
  const bool met = per_worker >= kCudaCasesPerWorker;
  std::printf("%-44s %8.1f   (goal >= %.0f: %s)\n", "cuda cases/s per worker", per_worker, kCudaCasesPerWorker,
              met ? "met" : "NOT met");
  ratios["cuda cases/s per worker"] = {{"value", per_worker}, {"goal", kCudaCasesPerWorker}, {"met", met}};
  for (const Mode* m : {&cuda, &impl_cpu}) {
    const double value = cpu.rate() > 0 ? m->rate() / cpu.rate() : 0;
    std::printf("%-44s %8.3f\n", (m->name + " / " + cpu.name).c_str(), value);
    ratios[m->name + " / " + cpu.name] = {{"value", value}};
  }
  nlohmann::json out = {{"device", "cuda"}, {"seed", seed}, {"seconds_per_mode", seconds}, {"cores", cores},
                        {"ratios", ratios}};
  for (const auto& m : modes)
    out["modes"][m.name] = {{"cases", m.cases}, {"seconds", m.seconds}, {"cases_per_second", m.rate()}};
  write_json(json_path, out);
  return 0;
}

int run(int argc, char** argv) {
  double seconds = 10;
  std::uint64_t seed = 20261121;
  fs::path json_path = "throughput.json";
  // The parity binary beside this one (both are built into the build folder), for `parity serve`.
  fs::path parity = fs::read_symlink("/proc/self/exe").parent_path() / "parity";
  std::string python, device = "cpu";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--seconds" || a == "--seed" || a == "--json" || a == "--parity" || a == "--python" ||
         a == "--device") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--seconds") seconds = std::stod(v);
      else if (a == "--seed") seed = std::stoull(v);
      else if (a == "--parity") parity = v;
      else if (a == "--python") python = v;
      else if (a == "--device") device = v;
      else json_path = v;
    } else {
      device = "";  // a usage error
      break;
    }
  }
  if (device != "cpu" && device != "cuda") {
    std::fprintf(stderr, "usage: parity_throughput_bench [--seconds S] [--seed N] [--json FILE] [--parity BIN] "
                         "[--python PY] [--device cpu|cuda]\n");
    return 2;
  }
  if (device == "cuda") return run_on_device(seconds, seed, json_path);
  const int cores = engine::usable_cores();
  const fs::path work = fs::temp_directory_path() / ("parity-throughput-" + std::to_string(::getpid()));
  std::vector<Mode> modes;
  std::fprintf(stderr, "throughput: %.0f s per mode, seed %llu, %d cores\n", seconds,
               static_cast<unsigned long long>(seed), cores);
  modes.push_back(campaign("fork_per_case", engine::Isolation::Fork, 1, seconds, seed, work));
  modes.push_back(campaign("workers_1", engine::Isolation::Workers, 1, seconds, seed, work));
  const std::string all_name = "workers_" + std::to_string(cores);
  if (cores > 1) modes.push_back(campaign(all_name, engine::Isolation::Workers, cores, seconds, seed, work));
  const std::string guided_name = all_name + "_guided";
  modes.push_back(campaign(guided_name, engine::Isolation::Workers, cores, seconds, seed, work, {},
                           engine::kDefaultGuidedShare));
  engine::EvalSides served;
  served.impl_cmd = "'" + parity.string() + "' serve --backend impl";
  modes.push_back(campaign("protocol_impl_" + std::to_string(cores), engine::Isolation::Workers, cores, seconds,
                           seed, work, served));
  if (!python.empty()) {
    engine::EvalSides judged;
    judged.oracle_cmd = "'" + python + "' '" PARITY_SOURCE_DIR "/backends/python/torch_backend.py'";
    modes.push_back(campaign("python_oracle_" + std::to_string(cores), engine::Isolation::Workers, cores, seconds,
                             seed, work, judged));
  }
  modes.push_back(in_process(seconds, seed));
  std::error_code ec;
  fs::remove_all(work, ec);

  auto find = [&](const std::string& name) -> const Mode* {
    for (const auto& m : modes)
      if (m.name == name) return &m;
    return nullptr;
  };
  const Mode& fork = *find("fork_per_case");
  const Mode& one = *find("workers_1");
  const Mode& inproc = *find("in_process");
  const Mode* all = cores > 1 ? find(all_name) : nullptr;
  const Mode& protocol = *find("protocol_impl_" + std::to_string(cores));
  const Mode* python_oracle = find("python_oracle_" + std::to_string(cores));
  const Mode& guided = *find(guided_name);

  print_modes(modes);
  nlohmann::json ratios = nlohmann::json::object();
  auto ratio = [&](const char* name, double value, double goal) {
    std::printf("%-44s %8.2f   (goal >= %.2f: %s)\n", name, value, goal, value >= goal ? "met" : "NOT met");
    ratios[name] = {{"value", value}, {"goal", goal}, {"met", value >= goal}};
  };
  ratio("workers_1 / in_process", one.rate() / inproc.rate(), 0.6);
  ratio("workers_1 / fork_per_case", one.rate() / fork.rate(), 10);
  if (all) ratio((all->name + " / workers_1").c_str(), all->rate() / one.rate(), 1.7);
  ratio((protocol.name + " / " + (all ? all->name : one.name)).c_str(), protocol.rate() / (all ? all : &one)->rate(),
        0.25);
  const Mode& unguided = all ? *all : one;
  ratio((guided.name + " / " + unguided.name).c_str(), guided.rate() / unguided.rate(), 0.8);
  if (python_oracle) {
    const double per_core = python_oracle->rate() / cores;
    std::printf("%-44s %8.1f   (goal >= 300: %s)\n", "python_oracle cases/s per core", per_core,
                per_core >= 300 ? "met" : "NOT met");
    ratios["python_oracle cases/s per core"] = {{"value", per_core}, {"goal", 300}, {"met", per_core >= 300}};
  }

  nlohmann::json out = {{"seed", seed}, {"seconds_per_mode", seconds}, {"cores", cores}, {"ratios", ratios}};
  for (const auto& m : modes)
    out["modes"][m.name] = {{"cases", m.cases}, {"seconds", m.seconds}, {"cases_per_second", m.rate()}};
  write_json(json_path, out);
  return 0;
}

}  // namespace
}  // namespace parity::bench

int main(int argc, char** argv) {
  try {
    return parity::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity_throughput_bench: %s\n", e.what());
    return 1;
  }
}
