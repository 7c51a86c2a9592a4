// Detection power, in one run: each planted fault of kFaults (impl_backend/planted_faults.h: the combination
// faults, which misbehave only where two situations meet, and one fault of a single op as the baseline) is
// planted in its own `parity fuzz -x` campaign per seed, and the table says which seeds found it, after how many
// cases and how many seconds of generation and evaluation (the first finding's case over the campaign's cases
// per second: shrinking, which follows, is not detection). It prints the share found and the medians, and writes
// them as JSON, for two modes side by side: the recipes and random steps alone (`--guided-share 0`), and with
// coverage guidance (engine/corpus.h, at parity fuzz's default share).
//
//   parity_detection_bench [--seconds S | --cases C] [--seeds N] [--jobs J] [--json FILE] [--parity BIN]
//                          [--plant SPEC] [--mode recipes|guided] [--require-found]
//
// Both modes run the generator's program for every case guidance leaves alone, so a seed's two campaigns often find
// a fault at the same case. With both modes, a last column pairs them by seed: the seeds where guidance found the
// fault earlier, at the same case, later (a miss is latest). Medians of a few seeds move with every change to the
// generator; the pairs say what guidance itself changed.
//
// --seconds (or --cases) is each campaign's budget: a fault not found in it counts as missed. --plant runs that
// one fault, --mode that one mode. --require-found exits 1 when a fault is missed: with --cases, whose campaigns
// are the same programs every run, that is the ctest `detection`, a check of what is found and never of how
// fast.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "files/input_file.h"
#include "files/output_file.h"
#include "program/json_text.h"
#include "reports/run_summary.h"

extern char** environ;

namespace parity::bench {
namespace {

namespace fs = std::filesystem;

// One per class of miss the issue that asked for this benchmark names, and a single-op baseline.
const std::vector<std::string> kFaults = {
    "mul=values",                       // baseline: one op, no combination
    "retain_grad=stale_retained_view",  // retain_grad on a view × a write to its storage × backward
    "sum=view_written",                 // a view × an earlier write to its storage
    "fill_=edge_scalar",                // an op × a value from a dtype's edge
    "mul_scalar=edge_scalar",
    "mul_=shared_storage",              // an in-place op × operands sharing a storage (what taint may hide)
    "add_=zero_dim_other",              // an in-place op × a 0-dim operand of another dtype
    "deepcopy=grad_memo",               // a tensor × its .grad, deep-copied under one memo (identity only)
};

struct Run {
  bool found = false;
  std::uint64_t cases = 0;    // the first unexpected finding's case index + 1, or the cases run when missed
  double seconds = 0;         // cases / the campaign's cases per second
};

// `parity fuzz` with PARITY_PLANT=plant in the environment, its output in DIR/log.txt; returns its exit status.
int run_campaign(const fs::path& parity, const std::string& plant, std::vector<std::string> args, const fs::path& dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("PARITY_PLANT=")) env.emplace_back(*e);
  env.push_back("PARITY_PLANT=" + plant);
  args.insert(args.begin(), parity.string());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = (dir / "log.txt").string();
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("cannot start " + parity.string() + ": " + std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A campaign's budget: `--seconds S` or `--cases C`, as parity fuzz takes it.
struct Budget {
  std::string flag = "--seconds";
  std::string value = "60";
};

// How a campaign generates: the name in the table and the JSON, and the flags that ask for it.
struct Mode {
  std::string name;
  std::vector<std::string> flags;
};
const std::vector<Mode> kModes = {{"recipes", {"--guided-share", "0"}}, {"guided", {}}};

Run detect(const fs::path& parity, const std::string& plant, const Mode& mode, std::uint64_t seed,
           const Budget& budget, int jobs, const fs::path& work) {
  const fs::path dir = work / (plant + "-" + mode.name + "-" + std::to_string(seed));
  fs::create_directories(dir);
  std::vector<std::string> args = {"fuzz", "-x", budget.flag, budget.value, "--seed", std::to_string(seed), "--jobs",
                                   std::to_string(jobs), "--out", (dir / "out").string(), "--overwrite"};
  args.insert(args.end(), mode.flags.begin(), mode.flags.end());
  const int status = run_campaign(parity, plant, args, dir);
  // 0: nothing unexpected; 1: an unexpected finding; anything else is the campaign failing, not a result.
  if (status != 0 && status != 1)
    throw std::runtime_error("parity fuzz with PARITY_PLANT=" + plant + " exited " + std::to_string(status) +
                             " (its output: " + (dir / "log.txt").string() + ")");
  const std::string text = files::read_text_file(dir / "out" / "run.json");
  const reports::RunSummary s = reports::run_summary_from_json(program::parse_json_text(text, "run.json"));
  Run r;
  r.cases = s.cases;
  for (const auto& [signature, group] : s.groups)
    if (!group.expected) {
      r.found = true;
      r.cases = std::min(r.cases, group.first_case + 1);
    }
  r.seconds = s.cases_per_second > 0 ? static_cast<double>(r.cases) / s.cases_per_second : 0;
  return r;
}

// The seeds where the second mode found the fault before the first, at the same case, after it.
struct Paired {
  int earlier = 0, same = 0, later = 0;
};

Paired pair_by_seed(const std::vector<Run>& first, const std::vector<Run>& second) {
  auto at = [](const Run& r) { return r.found ? r.cases : UINT64_MAX; };
  Paired p;
  for (std::size_t i = 0; i < first.size() && i < second.size(); ++i) {
    const std::uint64_t a = at(first[i]), b = at(second[i]);
    (b < a ? p.earlier : b == a ? p.same : p.later) += 1;
  }
  return p;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Column {
  std::vector<Run> by_seed;
  std::vector<double> cases, seconds;
  nlohmann::json runs = nlohmann::json::array();
};

int run(int argc, char** argv) {
  Budget budget;
  bool require_found = false;
  std::uint64_t seeds = 5;
  int jobs = 2;
  fs::path json_path = "detection.json";
  fs::path parity = fs::read_symlink("/proc/self/exe").parent_path() / "parity";
  std::vector<std::string> faults = kFaults;
  std::vector<Mode> modes = kModes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--require-found") {
      require_found = true;
      continue;
    }
    const bool valued = a == "--seconds" || a == "--cases" || a == "--seeds" || a == "--jobs" || a == "--json" ||
                        a == "--parity" || a == "--plant" || a == "--mode";
    if (!valued || i + 1 >= argc) {
      std::fprintf(stderr, "usage: parity_detection_bench [--seconds S | --cases C] [--seeds N] [--jobs J] "
                           "[--json FILE] [--parity BIN] [--plant SPEC] [--mode recipes|guided] [--require-found]\n");
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--seconds" || a == "--cases") budget = {a, v};
    else if (a == "--seeds") seeds = std::stoull(v);
    else if (a == "--jobs") jobs = std::stoi(v);
    else if (a == "--parity") parity = v;
    else if (a == "--plant") faults = {v};
    else if (a == "--mode") {
      std::erase_if(modes, [&](const Mode& m) { return m.name != v; });
      if (modes.empty()) {
        std::fprintf(stderr, "parity_detection_bench: --mode must be recipes or guided\n");
        return 2;
      }
    } else json_path = v;
  }
  const fs::path work = fs::temp_directory_path() / ("parity-detection-" + std::to_string(::getpid()));
  std::printf("detection: %zu faults x %llu seeds, %s %s each at most, %d jobs; found / median cases / median s\n",
              faults.size(), static_cast<unsigned long long>(seeds), budget.flag.c_str() + 2, budget.value.c_str(),
              jobs);
  std::printf("%-34s", "planted fault");
  for (const Mode& m : modes) std::printf(" | %-30s", m.name.c_str());
  const bool paired = modes.size() == 2;
  if (paired) std::printf(" | %s vs %s: earlier/same/later", modes[1].name.c_str(), modes[0].name.c_str());
  std::printf("\n");
  nlohmann::json out = {{"budget", {{budget.flag.substr(2), std::stod(budget.value)}}}, {"seeds", seeds},
                        {"jobs", jobs}, {"modes", nlohmann::json::array()}, {"faults", nlohmann::json::object()}};
  for (const Mode& m : modes) out["modes"].push_back(m.name);
  std::vector<std::string> missed;
  for (const std::string& plant : faults) {
    std::printf("%-34s", plant.c_str());
    std::vector<Column> columns;
    for (const Mode& mode : modes) {
      Column& c = columns.emplace_back();
      for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        const Run r = c.by_seed.emplace_back(detect(parity, plant, mode, seed, budget, jobs, work));
        c.runs.push_back({{"seed", seed}, {"found", r.found}, {"cases", r.cases}, {"seconds", r.seconds}});
        if (!r.found) {
          missed.push_back(plant + " (" + mode.name + ", seed " + std::to_string(seed) + ")");
          continue;
        }
        c.cases.push_back(static_cast<double>(r.cases));
        c.seconds.push_back(r.seconds);
      }
      std::printf(" | %3zu/%-3llu %12.0f %10.2f", c.cases.size(), static_cast<unsigned long long>(seeds),
                  median(c.cases), median(c.seconds));
      std::fflush(stdout);
      out["faults"][plant][mode.name] = {{"found", c.cases.size()}, {"median_cases", median(c.cases)},
                                         {"median_seconds", median(c.seconds)}, {"runs", c.runs}};
    }
    if (paired) {
      const Paired p = pair_by_seed(columns[0].by_seed, columns[1].by_seed);
      std::printf(" | %d/%d/%d", p.earlier, p.same, p.later);
      out["faults"][plant]["paired"] = {{"earlier", p.earlier}, {"same", p.same}, {"later", p.later}};
    }
    std::printf("\n");
  }
  fs::remove_all(work);
  if (json_path.has_parent_path()) fs::create_directories(json_path.parent_path());
  files::write_text_file_atomically(json_path, out.dump(2) + "\n", "the detection results");
  std::printf("written: %s (medians over the seeds that found the fault)\n", json_path.string().c_str());
  for (const std::string& m : missed) std::printf("missed: %s\n", m.c_str());
  return require_found && !missed.empty() ? 1 : 0;
}

}  // namespace
}  // namespace parity::bench

int main(int argc, char** argv) {
  try {
    return parity::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity_detection_bench: %s\n", e.what());
    return 1;
  }
}
