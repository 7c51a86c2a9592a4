#include "engine/corpus.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <unordered_map>

#include "engine/case_seed.h"
#include "files/error.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "generators/mutate.h"
#include "generators/program_state.h"
#include "generators/rng.h"
#include "generators/selection.h"
#include "judge/operand_class.h"
#include "judge/role_combinations.h"
#include "program/internal_assert.h"
#include "program/json.h"
#include "program/json_text.h"
#include "reports/error.h"
#include "reports/json_fields.h"
#include "reports/jsonl.h"

namespace parity::engine {

using program::Program;

namespace {

// Case k's draws for guidance are a stream of their own, apart from the generator's.
constexpr std::uint64_t kGuidanceSalt = 0x6a09e667f3bcc909ULL;
constexpr int kTournament = 8;  // draws, of which the cheapest (observation_cost) is mutated
constexpr std::size_t kNotMet = SIZE_MAX;

// What a case of p costs to run, in elements observed: every step observes every value live after it, so a
// tensor's elements count once for each step from the one that makes it to the last. The sizes a step names
// are all it says statically; a view counts as its own tensor, for its values are observed as much. Steps
// alone undercount it: a short program holding a tensor at the size cap costs thousands of small ones, and as
// a parent it passes its size on to its mutants.
double observation_cost(const Program& p) {
  double cost = 0;
  const std::size_t n = p.steps.size();
  for (std::size_t i = 0; i < n; ++i) {
    double numel = 1;
    for (const std::int64_t size : p.steps[i].attrs.sizes)
      numel *= static_cast<double>(std::max<std::int64_t>(size, 1));
    cost += (1 + numel) * static_cast<double>(n - i);
  }
  return cost;
}

std::optional<std::size_t> aim_index(const std::string& key) {
  static const std::unordered_map<std::string_view, std::size_t> index = [] {
    std::unordered_map<std::string_view, std::size_t> out;
    for (std::size_t i = 0; i < aim_keys().size(); ++i) out.emplace(aim_keys()[i], i);
    return out;
  }();
  const auto at = index.find(key);
  if (at == index.end()) return std::nullopt;
  return at->second;
}

// The aim_keys() indices of these keys; a key this binary does not know is refused (`where` names the record
// that holds it).
std::vector<std::size_t> aim_indices(const std::vector<std::string>& keys, const std::string& where) {
  std::vector<std::size_t> out;
  for (const std::string& key : keys) {
    const auto at = aim_index(key);
    if (!at) throw reports::ReportError(where + ": \"" + key + "\" is no key guidance aims at in this parity");
    out.push_back(*at);
  }
  return out;
}

// The aim_keys() a case met: every op × operand situation, the role goals among its pairs and triples.
std::vector<std::size_t> aims_met(const judge::CoverageTags& met) {
  std::vector<std::size_t> out;
  for (const auto* keys : {&met.op_operands, &met.role_pairs, &met.role_triples})
    for (const std::string& key : *keys)
      if (const auto at = aim_index(key)) out.push_back(*at);
  return out;
}

// What starts a role goal: retain_grad on a view (or on the base), or a tensor saved, then written.
generators::Mutation mutation_starting(const std::string& goal) {
  const auto& events = judge::tensor_events();
  return goal.starts_with(events[static_cast<std::size_t>(judge::TensorEvent::RetainGrad)] + "@")
             ? generators::Mutation::RetainView
             : generators::Mutation::WriteBefore;
}

// What the campaign can run of a program: nothing on a device it does not draw, only the selected ops, and only
// what a worker reads back (program/json.h's limits): a planned program travels as JSON, and one the reader
// refused would end the campaign.
std::optional<Program> runnable(Program p, const generators::GenConfig& config) {
  if (!config.cuda && program::uses_cuda(p)) return std::nullopt;
  if (!config.selection.everything()) p = generators::select_steps(p, config.selection);
  if (p.steps.empty()) return std::nullopt;
  try {
    program::program_from_json(program::to_json(p));
  } catch (const program::JsonError&) {
    return std::nullopt;
  }
  return p;
}

// FNV-1a of the program's JSON text: a file name that is the same for the same program on every machine.
std::string file_name_of(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  char name[24];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h));
  return std::string(name) + ".json";
}

Program program_in(const nlohmann::json& j, const std::string& origin) {
  try {
    Program p = program::program_from_json(j);
    std::string why;
    if (!generators::well_formed(p, &why)) throw program::JsonError(why);
    return p;
  } catch (const program::JsonError& e) {
    throw reports::ReportError(origin + ": not a program parity can run: " + e.what());
  }
}

}  // namespace

generators::Mutation mutation_making(judge::OperandClass c) {
  using generators::Mutation;
  switch (c) {
    case judge::OperandClass::ViewWritten: return Mutation::WrittenView;
    case judge::OperandClass::SharedStorage: return Mutation::SharedOperand;
    case judge::OperandClass::ZeroDimOther: return Mutation::ZeroDimOperand;
    case judge::OperandClass::EdgeScalar: return Mutation::EdgeScalar;
    case judge::OperandClass::GradOperand: return Mutation::GradOperand;
    case judge::OperandClass::MemoStorage: return Mutation::MemoView;
    case judge::OperandClass::MemoGrad: return Mutation::MemoGrad;
  }
  PARITY_HARNESS_UNREACHABLE("no mutation makes this operand situation");
}

const std::vector<std::string>& aim_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out = judge::op_operand_names();
    for (const auto* goals : {&judge::role_pair_goals(), &judge::role_triple_goals()})
      out.insert(out.end(), goals->begin(), goals->end());
    return out;
  }();
  return keys;
}

Corpus::Corpus(std::vector<Program> loaded, reports::ShardInfo shard, double guided_share,
               generators::GenConfig config)
    : loaded_(std::move(loaded)),
      first_met_(aim_keys().size(), kNotMet),
      with_op_(program::op_table().size()),
      shard_(shard),
      share_(guided_share),
      config_(std::move(config)) {
  for (std::size_t j = 0; j < loaded_.size(); ++j)
    if (j % static_cast<std::size_t>(shard_.total) == static_cast<std::size_t>(shard_.index))
      regressions_.push_back(loaded_[j]);
}

std::uint64_t corpus_lag(std::uint64_t ordinal) { return std::clamp<std::uint64_t>(ordinal / 2, 1, kCorpusLag); }

std::uint64_t Corpus::lag_before(std::uint64_t k) const {
  const auto total = static_cast<std::uint64_t>(shard_.total);
  return corpus_lag(k / total) * total;
}

std::size_t Corpus::visible_to(std::uint64_t k) const {
  const std::uint64_t lag = lag_before(k);
  const auto old_enough = std::partition_point(entries_.begin(), entries_.end(),
                                               [&](const Entry& e) { return e.added_by + lag <= k; });
  return loaded_.size() + static_cast<std::size_t>(old_enough - entries_.begin());
}

std::optional<PlannedCase> Corpus::plan(std::uint64_t seed, std::uint64_t k) const {
  const std::uint64_t ordinal = k / static_cast<std::uint64_t>(shard_.total);
  if (ordinal < regressions_.size()) return PlannedCase{regressions_[ordinal], reports::CaseOrigin::Corpus};
  if (share_ <= 0) return std::nullopt;
  const std::size_t visible = visible_to(k);
  generators::Rng rng(case_seed(seed, k) ^ kGuidanceSalt);
  if (visible == 0 || !rng.chance(share_)) return std::nullopt;
  const std::size_t recent = std::min(visible, kRecentEntries);
  auto draw = [&] {
    return static_cast<std::size_t>(rng.chance(0.5) ? rng.below(static_cast<std::int64_t>(visible))
                                                    : static_cast<std::int64_t>(visible - recent) +
                                                          rng.below(static_cast<std::int64_t>(recent)));
  };
  auto entry = [&](std::size_t at) -> const Program& {
    return at < loaded_.size() ? loaded_[at] : entries_[at - loaded_.size()].program;
  };
  // The cheapest of kTournament draws: what a costly program reached a cheap one often reaches too (AFL favours
  // small, fast entries likewise), and a mutant costs about what its parent does.
  const Program* parent = &entry(draw());
  double parent_cost = observation_cost(*parent);
  for (int i = 1; i < kTournament; ++i) {
    const Program& other = entry(draw());
    if (const double cost = observation_cost(other); cost < parent_cost) {
      parent = &other;
      parent_cost = cost;
    }
  }
  std::optional<Program> mutant;
  if (rng.chance(kAimedShare)) mutant = aimed(visible - std::min(visible, loaded_.size()), rng);
  if (!mutant) mutant = generators::mutate(*parent, rng, config_);
  if (!mutant) return std::nullopt;
  if (auto p = runnable(std::move(*mutant), config_)) return PlannedCase{std::move(*p), reports::CaseOrigin::Mutated};
  return std::nullopt;
}

bool Corpus::may_start(std::uint64_t k, std::uint64_t next_to_judge) const {
  return share_ <= 0 || next_to_judge + lag_before(k) > k;
}

std::optional<Program> Corpus::aimed(std::size_t entries, generators::Rng& rng) const {
  // The keys not met whose op some entry holds, and how many of those entries there are.
  auto holding = [&](program::OpId op) {
    const auto& with = with_op_[static_cast<std::size_t>(op)];
    return static_cast<std::size_t>(std::lower_bound(with.begin(), with.end(), entries) - with.begin());
  };
  // A situation first, then an op: each situation gets as many aimed mutants however many ops can meet it (a
  // view of a written storage about a hundred, a memo holding a .grad one).
  std::array<std::vector<std::size_t>, judge::kOperandClassCount> aims;
  const auto& keys = judge::op_operand_keys();
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (first_met_[i] >= entries && holding(keys[i].op) > 0)
      aims[static_cast<std::size_t>(keys[i].operand_class)].push_back(i);
  // The role goals not met, one more group where some entry runs a backward for them to end in.
  std::vector<std::size_t> goals;
  const auto backward_held = static_cast<std::size_t>(
      std::lower_bound(with_backward_.begin(), with_backward_.end(), entries) - with_backward_.begin());
  for (std::size_t i = keys.size(); i < aim_keys().size() && backward_held > 0; ++i)
    if (first_met_[i] >= entries) goals.push_back(i);
  std::vector<const std::vector<std::size_t>*> situations;
  for (const auto& a : aims)
    if (!a.empty()) situations.push_back(&a);
  if (!goals.empty()) situations.push_back(&goals);
  if (situations.empty()) return std::nullopt;
  const std::size_t aim = rng.pick(*rng.pick(situations));
  // Up to kAimedParents entries holding the aim's op (a role goal's: a backward), the cheapest first, as for any
  // mutant (kTournament).
  const bool role_goal = aim >= keys.size();
  const auto& with = role_goal ? with_backward_ : with_op_[static_cast<std::size_t>(keys[aim].op)];
  const auto held = static_cast<std::int64_t>(role_goal ? backward_held : holding(keys[aim].op));
  // Each draw's cost, worked out once: the sort compares them O(n log n) times.
  std::vector<std::pair<double, const Program*>> parents;
  for (int i = 0; i < kAimedParents; ++i) {
    const Program& drawn = entries_[with[static_cast<std::size_t>(rng.below(held))]].program;
    parents.emplace_back(observation_cost(drawn), &drawn);
  }
  std::stable_sort(parents.begin(), parents.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [cost, p] : parents) {
    const Program& parent = *p;
    std::optional<Program> mutant;
    if (role_goal) {
      mutant = generators::mutate_with(parent, mutation_starting(aim_keys()[aim]), rng, config_);
    } else {
      std::vector<int> steps;
      for (std::size_t i = 0; i < parent.steps.size(); ++i)
        if (parent.steps[i].op == keys[aim].op) steps.push_back(static_cast<int>(i));
      mutant = generators::mutate_at(parent, mutation_making(keys[aim].operand_class), rng.pick(steps), rng, config_);
    }
    if (mutant && *mutant != parent) return mutant;
  }
  return std::nullopt;
}

void Corpus::note_met(std::size_t entry) {
  for (std::size_t key : entries_[entry].met) first_met_[key] = std::min(first_met_[key], entry);
  std::vector<bool> held(program::op_table().size(), false);
  for (const program::Step& s : entries_[entry].program.steps) held[static_cast<std::size_t>(s.op)] = true;
  bool backward = false;
  for (std::size_t op = 0; op < held.size(); ++op) {
    if (!held[op]) continue;
    with_op_[op].push_back(entry);
    backward = backward || program::op_table()[op].runs_backward;
  }
  if (backward) with_backward_.push_back(entry);
}

void Corpus::add(std::uint64_t k, Program p, const judge::CoverageTags& met) {
  entries_.push_back({k, std::move(p), aims_met(met)});
  note_met(entries_.size() - 1);
}

std::vector<Program> Corpus::added() const {
  std::vector<Program> out;
  for (const Entry& e : entries_) out.push_back(e.program);
  return out;
}

std::vector<nlohmann::json> Corpus::take_log_lines() {
  std::vector<nlohmann::json> out;
  if (!loaded_logged_)
    for (const Program& p : loaded_) out.push_back({{"case", nullptr}, {"program", program::to_json(p)}});
  loaded_logged_ = true;
  for (; logged_ < entries_.size(); ++logged_) {
    const Entry& e = entries_[logged_];
    nlohmann::json met = nlohmann::json::array();
    for (std::size_t key : e.met) met.push_back(aim_keys()[key]);
    out.push_back({{"case", program::uint64_to_json(e.added_by)}, {"program", program::to_json(e.program)},
                   {"met", std::move(met)}});
  }
  return out;
}

Corpus Corpus::restore(const std::filesystem::path& log, std::uint64_t next_case, reports::ShardInfo shard,
                       double guided_share, generators::GenConfig config) {
  std::vector<Program> loaded;
  std::vector<Entry> entries;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(log, ec))) {
    const reports::JsonlContents contents = reports::read_jsonl(log);
    for (std::size_t i = 0; i < contents.records.size(); ++i) {
      const nlohmann::json& r = contents.records[i];
      const std::string where = log.string() + ":" + std::to_string(contents.lines[i]);
      if (!r.is_object() || !r.contains("case") || !r.contains("program"))
        throw reports::ReportError(where + ": not a corpus line (\"case\" and \"program\")");
      Program p = program_in(r.at("program"), where);
      if (r.at("case").is_null()) {
        loaded.push_back(std::move(p));
        continue;
      }
      std::uint64_t k = 0;
      try {
        k = reports::json_u64(r, "case", where);
      } catch (const program::JsonError& e) {
        throw reports::ReportError(e.what());
      }
      // Lines before the keys met were logged met none.
      std::vector<std::string> met;
      if (r.contains("met")) {
        const nlohmann::json& m = r.at("met");
        if (!m.is_array() || !std::all_of(m.begin(), m.end(), [](const nlohmann::json& x) { return x.is_string(); }))
          throw reports::ReportError(where + ": \"met\" must be a list of keys");
        met = m.get<std::vector<std::string>>();
      }
      // A line of a case judged again after a kill repeats the first; lines past next_case are judged again.
      if (k < next_case && (entries.empty() || entries.back().added_by < k))
        entries.push_back({k, std::move(p), aim_indices(met, where)});
    }
  }
  Corpus c(std::move(loaded), shard, guided_share, std::move(config));
  c.entries_ = std::move(entries);
  for (std::size_t i = 0; i < c.entries_.size(); ++i) c.note_met(i);
  c.loaded_logged_ = true;
  c.logged_ = c.entries_.size();
  return c;
}

std::vector<Program> read_corpus_folder(const std::filesystem::path& dir, const generators::GenConfig& config) {
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (!std::filesystem::exists(status)) return {};
  if (!std::filesystem::is_directory(status))
    throw reports::ReportError(dir.string() + ": --corpus names a file, not a folder: give a folder of programs");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec) throw reports::ReportError(dir.string() + ": cannot list the corpus folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<Program> out;
  for (const auto& f : files) {
    std::string text;
    try {
      text = files::read_text_file(f);
    } catch (const files::FileError& e) {
      throw reports::ReportError(e.what());
    }
    nlohmann::json j;
    try {
      j = program::parse_json_text(text, f.string());
    } catch (const program::JsonError& e) {
      throw reports::ReportError(e.what());
    }
    if (auto p = runnable(program_in(j, f.string()), config)) out.push_back(std::move(*p));
  }
  return out;
}

std::size_t write_corpus_folder(const std::filesystem::path& dir, const std::vector<Program>& programs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw reports::ReportError(dir.string() + ": cannot create the corpus folder" + (ec ? ": " + ec.message() : ""));
  std::size_t written = 0;
  for (const Program& p : programs) {
    const std::string text = program::to_json(p).dump(1) + "\n";
    const std::filesystem::path path = dir / file_name_of(text);
    if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) continue;
    try {
      files::write_text_file_atomically(path, text, "a corpus program");
    } catch (const files::FileError& e) {
      throw reports::ReportError(e.what());
    }
    ++written;
  }
  return written;
}

}  // namespace parity::engine
