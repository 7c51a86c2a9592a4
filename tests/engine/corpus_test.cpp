// Coverage guidance's corpus (engine/corpus.h): which entries a case may draw, the log a resume rebuilds it from,
// the corpus folder, and guided campaigns that are as deterministic as unguided ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "engine/campaign.h"
#include "engine/corpus.h"
#include "engine/journal.h"
#include "generators/program_gen.h"
#include "judge/backend.h"
#include "judge/coverage.h"
#include "oracle/torch_backend.h"
#include "program/json.h"
#include "program/program_builder.h"
#include "reports/error.h"
#include "reports/jsonl.h"
#include "tests/support/campaign.h"
#include "tests/support/stop_after.h"

namespace parity::engine {
namespace {

namespace fs = std::filesystem;
using program::Program;
using testing::reviewed_ledger;
using testing::StopAfter;
using testing::TempDir;

// Enough cases past the lag for hundreds of mutants.
constexpr std::uint64_t kGuidedCases = kCorpusLag + 1500;

Program some_program(std::uint64_t seed) { return generators::generate(seed, rc::kNominalSize, {}).value(); }

CampaignConfig guided_campaign(const fs::path& out, int jobs) {
  CampaignConfig c;
  c.seed = 21;
  c.cases = kGuidedCases;
  c.jobs = jobs;
  c.guided_share = 0.5;
  c.shrink_share = 0;  // what LibTorch's ledgered bugs give is recorded as found: only the cases matter here
  c.confirm_runs = 0;
  c.out = out;
  prepare_output(c.out, false);
  return c;
}

// What a campaign ran and counted, without its times and how it ran them.
reports::RunSummary comparable(reports::RunSummary s) {
  s.seconds = s.cases_per_second = s.shrink_seconds = 0;
  s.jobs = 0;
  s.resumed = 0;
  s.unshrunk_findings = 0;
  return s;
}

// The cases from `from` on that ran a mutant, out of the next n; each plan is checked to depend on the seed and k
// alone.
int mutants_among(const Corpus& corpus, std::uint64_t from, std::uint64_t n) {
  int mutated = 0;
  for (std::uint64_t k = from; k < from + n; ++k)
    if (auto p = corpus.plan(3, k)) {
      EXPECT_EQ(p->origin, reports::CaseOrigin::Mutated);
      EXPECT_EQ(corpus.plan(3, k)->program, p->program) << "a case's plan depends on the seed and k alone";
      ++mutated;
    }
  return mutated;
}

TEST(Corpus, TheLagIsHalfTheCasesBeforeUpToItsCap) {
  EXPECT_EQ(corpus_lag(0), 1u);
  EXPECT_EQ(corpus_lag(3), 1u);
  EXPECT_EQ(corpus_lag(9), 4u);
  EXPECT_EQ(corpus_lag(2 * kCorpusLag - 2), kCorpusLag - 1);
  EXPECT_EQ(corpus_lag(std::uint64_t{1} << 40), kCorpusLag);
}

TEST(Corpus, AnEntryOfTheFirstCasesIsDrawnOnceTheCampaignHasRunTwiceAsMany) {
  Corpus corpus({}, {}, 1.0, {});
  corpus.add(5, some_program(1));
  // Case 9 waits 4 cases: the first that may draw case 5's entry.
  for (std::uint64_t k = 6; k < 9; ++k) EXPECT_FALSE(corpus.plan(3, k)) << "case " << k;
  EXPECT_GT(mutants_among(corpus, 9, 50), 25);
  EXPECT_FALSE(corpus.may_start(9, 5));
  EXPECT_TRUE(corpus.may_start(9, 6));
  EXPECT_TRUE(Corpus({}, {}, 0.0, {}).may_start(9, 0)) << "unguided, nothing waits";
}

TEST(Corpus, AnEntryOfALaterCaseIsDrawnOnlyByCasesTheFullLagAfterIt) {
  constexpr std::uint64_t kAdded = 4 * kCorpusLag;
  Corpus corpus({}, {}, 1.0, {});
  corpus.add(kAdded, some_program(1));
  for (std::uint64_t k = kAdded + 1; k < kAdded + kCorpusLag; k += 97) EXPECT_FALSE(corpus.plan(3, k)) << "case " << k;
  EXPECT_GT(mutants_among(corpus, kAdded + kCorpusLag, 50), 25);
  // Case kAdded + lag may start only once case kAdded is judged.
  EXPECT_FALSE(corpus.may_start(kAdded + kCorpusLag, kAdded));
  EXPECT_TRUE(corpus.may_start(kAdded + kCorpusLag, kAdded + 1));
}

TEST(Corpus, AShardsLagCountsItsOwnCases) {
  // Shard 1 of 2 runs the odd cases: case 19 is its ninth, which waits 4 of its cases, 8 of the campaign's.
  Corpus corpus({}, {1, 2}, 1.0, {});
  corpus.add(11, some_program(1));
  EXPECT_FALSE(corpus.plan(3, 17));
  EXPECT_FALSE(corpus.may_start(19, 11));
  EXPECT_TRUE(corpus.may_start(19, 12));
  int mutated = 0;
  for (std::uint64_t k = 19; k < 119; k += 2) mutated += corpus.plan(3, k).has_value();
  EXPECT_GT(mutated, 25);
}

TEST(Corpus, AShardRunsItsShareOfTheFolderFirst) {
  const std::vector<Program> loaded = {some_program(1), some_program(2), some_program(3)};
  const Corpus shard1(loaded, {1, 2}, 0.0, {});
  // Shard 1 of 2 runs cases 1, 3, 5...: the folder's programs 1 (its first case), then nothing more of them.
  const auto first = shard1.plan(9, 1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->origin, reports::CaseOrigin::Corpus);
  EXPECT_EQ(first->program, loaded[1]);
  EXPECT_FALSE(shard1.plan(9, 3));
}

// A mutant's parent is the cheapest of its draws by the elements its case observes, not by its steps: a short
// program holding a large tensor costs as much as thousands of small ones, and its mutants inherit it.
TEST(Corpus, AMutantsParentIsTheCheapestOfItsDrawsByTheElementsItObserves) {
  program::ProgramBuilder costly, cheap;
  costly.unary(program::OpId::Neg, costly.rand({256, 256}));
  int x = cheap.rand({2, 3});
  for (int i = 0; i < 4; ++i) x = cheap.unary(program::OpId::Neg, x);
  Corpus corpus({}, {}, 1.0, {});
  corpus.add(5, costly.program());
  corpus.add(6, cheap.program());
  int mutants = 0, large = 0;
  for (std::uint64_t k = 13; k < 213; ++k) {
    const auto p = corpus.plan(3, k);
    if (!p) continue;
    ++mutants;
    const bool holds_large = std::any_of(p->program.steps.begin(), p->program.steps.end(), [](const auto& s) {
      std::int64_t numel = 1;
      for (const std::int64_t size : s.attrs.sizes) numel *= std::max<std::int64_t>(size, 1);
      return numel >= 256 * 256;
    });
    large += holds_large;
  }
  EXPECT_GT(mutants, 100);
  // Both entries are drawn alike; the costly one is a parent only where every draw was it.
  EXPECT_LT(large * 20, mutants) << large << " of " << mutants << " mutants hold a tensor of 2^16 elements";
}

// Whether LibTorch's trace of `p` says it met `key`, an op × operand situation or a role pair or triple.
bool meets(const Program& p, const std::string& key) {
  static const auto backend = oracle::make_torch_backend();
  const judge::CoverageTags met = judge::coverage_tags(p, judge::run(*backend, p));
  for (const auto* keys : {&met.op_operands, &met.role_pairs, &met.role_triples})
    if (std::find(keys->begin(), keys->end(), key) != keys->end()) return true;
  return false;
}

judge::CoverageTags met_only(const std::string& op_operand) {
  judge::CoverageTags met;
  met.op_operands = {op_operand};
  return met;
}

// Every op × operand key and role goal but these, as an entry's coverage reports what it met.
judge::CoverageTags every_key_but(const std::vector<std::string>& left_out) {
  judge::CoverageTags out;
  auto keep = [&](const std::vector<std::string>& keys, std::vector<std::string>& into) {
    for (const std::string& k : keys)
      if (std::find(left_out.begin(), left_out.end(), k) == left_out.end()) into.push_back(k);
  };
  keep(judge::op_operand_names(), out.op_operands);
  keep(judge::role_pair_goals(), out.role_pairs);
  keep(judge::role_triple_goals(), out.role_triples);
  return out;
}

// x.mul_(y) and a deepcopy of a leaf that has a .grad: steps an aimed mutation can put in each situation.
Program mul_and_deepcopy() {
  program::ProgramBuilder b;
  const int x = b.rand({2, 3}), y = b.rand({2, 3});
  b.binary(program::OpId::Mul_, x, y);
  const int leaf = b.rand({3}, program::DType::Float32, true);
  b.backward(b.unary(program::OpId::Sum, leaf));
  b.deepcopy(leaf, 1);
  return b.program();
}

TEST(Corpus, EachOperandSituationHasAMutationThatMakesIt) {
  for (std::size_t c = 0; c < judge::kOperandClassCount; ++c) {
    const auto situation = static_cast<judge::OperandClass>(c);
    int made = 0, met = 0;
    for (std::uint64_t seed = 0; seed < 60 && made < 12; ++seed) {
      const Program parent = seed == 0 ? mul_and_deepcopy() : some_program(seed);
      for (std::size_t i = 0; i < parent.steps.size(); ++i) {
        if (!judge::can_meet(program::spec(parent.steps[i].op), situation)) continue;
        generators::Rng rng(seed * 100 + i);
        const auto mutant =
            generators::mutate_at(parent, mutation_making(situation), static_cast<int>(i), rng, {});
        if (!mutant) continue;
        ++made;
        met += meets(*mutant, std::string(program::spec(parent.steps[i].op).name) + ":" +
                                  std::string(judge::to_string(situation)));
        break;
      }
    }
    EXPECT_GE(made, 1) << judge::to_string(situation);
    EXPECT_GE(2 * met, made) << judge::to_string(situation) << ": " << met << " of " << made
                             << " mutants met the situation they were made for";
  }
}

// `entry` in a corpus twice over: once having met every aim key but `aim`, once every key; the share of the
// mutants planned that meet `aim`.
double share_meeting(const Program& entry, const std::string& aim, bool aimed) {
  Corpus corpus({}, {}, 1.0, {});
  corpus.add(0, entry, every_key_but(aimed ? std::vector<std::string>{aim} : std::vector<std::string>{}));
  int mutants = 0, meeting = 0;
  for (std::uint64_t k = 4; k < 204; ++k)
    if (const auto p = corpus.plan(9, k)) {
      ++mutants;
      meeting += meets(p->program, aim);
    }
  EXPECT_GT(mutants, 150);
  return static_cast<double>(meeting) / mutants;
}

TEST(Corpus, AimedMutantsPutAnOpInTheSituationNoEntryMet) {
  const std::string aim = "mul_:shared_storage";
  const double aimed = share_meeting(mul_and_deepcopy(), aim, true);
  const double unaimed = share_meeting(mul_and_deepcopy(), aim, false);
  EXPECT_GE(aimed, kAimedShare / 2) << "most aimed mutants meet the one key left";
  EXPECT_GT(aimed, unaimed + 0.2) << "random mutations meet it now and then only";
}

// A role goal: retain_grad on a view, its base written, a backward through the view. The entry has a non-leaf
// whose view can be written through it, and a backward.
TEST(Corpus, AimedMutantsStartTheRoleGoalNoEntryMet) {
  program::ProgramBuilder b;
  const int y = b.scalar(program::OpId::MulScalar, b.rand({2, 3}, program::DType::Float32, true), 2);
  b.backward(b.unary(program::OpId::Sum, b.unary(program::OpId::Exp, y)));
  const std::string aim = "retain_grad@view+write_on_tensor@nonleaf+backward@view";
  const double aimed = share_meeting(b.program(), aim, true), unaimed = share_meeting(b.program(), aim, false);
  EXPECT_GT(aimed, unaimed + 0.05) << aimed << " against " << unaimed;
}

// An entry a generator bug made past the JSON reader's limits (a layout reaching beyond the storage a program
// may hold) gives no mutant: the worker would refuse it and the campaign end.
TEST(Corpus, APlannedProgramIsOneAWorkerReadsBack) {
  Program absurd = mul_and_deepcopy();
  absurd.steps[0].attrs.sizes = {program::kMaxNumel};
  absurd.steps[0].attrs.strides = {1};
  absurd.steps[0].attrs.offset = 1;
  absurd.steps[1].attrs.sizes = {program::kMaxNumel};
  absurd.steps[1].attrs.strides = {1};
  ASSERT_THROW(program::program_from_json(program::to_json(absurd)), program::JsonError);
  Corpus corpus({}, {}, 1.0, {});
  corpus.add(0, absurd, every_key_but({"mul_:shared_storage"}));
  int planned = 0;
  for (std::uint64_t k = 4; k < 104; ++k)
    if (const auto p = corpus.plan(9, k)) {
      ++planned;
      EXPECT_NO_THROW(program::program_from_json(program::to_json(p->program))) << "case " << k;
    }
  EXPECT_LT(planned, 100) << "the absurd entry's mutants were dropped";
}

TEST(Corpus, TheLogRestoresWhatJudgedCasesAdded) {
  TempDir dir;
  Corpus corpus({some_program(1)}, {}, 0.5, {});
  corpus.add(10, some_program(2), every_key_but({"mul_:shared_storage", "neg:view_written"}));
  corpus.add(20, some_program(3), met_only("mul_:shared_storage"));
  {
    reports::JsonlWriter log(dir.path() / kCorpusLogFile);
    log.append_all(corpus.take_log_lines());
    corpus.add(30, some_program(4));
    log.append_all(corpus.take_log_lines());
    // Case 20 judged again after a kill: its line comes twice.
    log.append({{"case", 20}, {"program", program::to_json(some_program(3))}});
  }
  EXPECT_TRUE(corpus.take_log_lines().empty()) << "each line is taken once";
  const Corpus restored = Corpus::restore(dir.path() / kCorpusLogFile, 30, {}, 0.5, {});
  EXPECT_EQ(restored.loaded(), corpus.loaded());
  EXPECT_EQ(restored.added(), (std::vector<Program>{some_program(2), some_program(3)}));
  // Restored, it plans what the corpus that had only judged cases below 30 planned, aimed mutants included.
  Corpus before({some_program(1)}, {}, 0.5, {});
  before.add(10, some_program(2), every_key_but({"mul_:shared_storage", "neg:view_written"}));
  before.add(20, some_program(3), met_only("mul_:shared_storage"));
  Corpus unaware({some_program(1)}, {}, 0.5, {});  // what a restore that dropped the keys would plan
  unaware.add(10, some_program(2));
  unaware.add(20, some_program(3));
  int differ = 0;
  for (std::uint64_t k = 1; k < 3 * kCorpusLag; k += 7) {
    const auto u = unaware.plan(4, k), b = before.plan(4, k);
    differ += u.has_value() != b.has_value() || (u && u->program != b->program);
  }
  EXPECT_GT(differ, 0) << "the keys met decide some plans";
  for (std::uint64_t k = 1; k < 3 * kCorpusLag; k += 7) {
    const auto a = restored.plan(4, k), b = before.plan(4, k);
    ASSERT_EQ(a.has_value(), b.has_value()) << "case " << k;
    if (a) EXPECT_EQ(a->program, b->program) << "case " << k;
  }
}

TEST(Corpus, AimKeysAreTheOpOperandKeysThenTheRoleGoals) {
  const auto& keys = aim_keys();
  ASSERT_EQ(keys.size(),
            judge::op_operand_names().size() + judge::role_pair_goals().size() + judge::role_triple_goals().size());
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size());
  EXPECT_EQ(keys.front(), judge::op_operand_names().front());
  EXPECT_EQ(keys.back(), judge::role_triple_goals().back());
}

TEST(Corpus, ALogLineNamingAKeyThisParityDoesNotKnowIsRefused) {
  TempDir dir;
  {
    reports::JsonlWriter log(dir.path() / kCorpusLogFile);
    log.append({{"case", 3}, {"program", program::to_json(some_program(3))}, {"met", {"mul_:nonsense"}}});
  }
  try {
    Corpus::restore(dir.path() / kCorpusLogFile, 10, {}, 0.5, {});
    FAIL() << "a key no aim_keys() holds was read";
  } catch (const reports::ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("mul_:nonsense"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":1"), std::string::npos) << "names the line: " << e.what();
  }
  {
    reports::JsonlWriter log(dir.path() / "second.jsonl");
    log.append({{"case", 3}, {"program", program::to_json(some_program(3))}, {"met", "mul_:shared_storage"}});
  }
  EXPECT_THROW(Corpus::restore(dir.path() / "second.jsonl", 10, {}, 0.5, {}), reports::ReportError)
      << "a key not in a list";
}

TEST(Corpus, TheFolderRoundTripsAndNamesAFileThatIsNoProgram) {
  TempDir dir;
  const std::vector<Program> programs = {some_program(1), some_program(2)};
  EXPECT_EQ(write_corpus_folder(dir.path() / "c", programs), 2u);
  EXPECT_EQ(write_corpus_folder(dir.path() / "c", programs), 0u) << "a program already there is not written again";
  auto read = read_corpus_folder(dir.path() / "c", {});
  std::sort(read.begin(), read.end(), [](const Program& a, const Program& b) { return a.steps.size() < b.steps.size(); });
  auto sorted = programs;
  std::sort(sorted.begin(), sorted.end(), [](const Program& a, const Program& b) { return a.steps.size() < b.steps.size(); });
  EXPECT_EQ(read, sorted);
  EXPECT_TRUE(read_corpus_folder(dir.path() / "absent", {}).empty());
  std::ofstream(dir.path() / "c" / "bad.json") << "{\"steps\": 3}";
  try {
    read_corpus_folder(dir.path() / "c", {});
    FAIL() << "a file that is no program was read";
  } catch (const reports::ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

TEST(GuidedCampaign, IsTheSameWhateverTheJobs) {
  TempDir dir;
  const CampaignResult one = run_campaign(guided_campaign(dir.path() / "one", 1), reviewed_ledger());
  const CampaignResult three = run_campaign(guided_campaign(dir.path() / "three", 3), reviewed_ledger());
  EXPECT_GT(one.summary.guidance.mutated, 300u);
  EXPECT_GT(one.summary.guidance.added, 0u);
  EXPECT_EQ(comparable(one.summary), comparable(three.summary));
  EXPECT_EQ(reports::read_jsonl(dir.path() / "one" / "findings.jsonl").records,
            reports::read_jsonl(dir.path() / "three" / "findings.jsonl").records);
  EXPECT_FALSE(fs::exists(dir.path() / "one" / kCorpusLogFile)) << "a complete campaign keeps no corpus log";
}

TEST(GuidedCampaign, AStoppedOneResumesToTheSameCampaign) {
  TempDir dir;
  const CampaignResult whole = run_campaign(guided_campaign(dir.path() / "whole", 2), reviewed_ledger());
  std::atomic<bool> stop{false};
  StopAfter observer(kCorpusLag + 300, stop);
  const CampaignResult first =
      run_campaign(guided_campaign(dir.path() / "parts", 2), reviewed_ledger(), &stop, &observer);
  ASSERT_TRUE(first.summary.interrupted);
  ASSERT_GT(first.summary.guidance.mutated, 0u) << "stopped where mutants already ran";
  const CampaignResult rest = resume_campaign(read_journal(dir.path() / "parts"), reviewed_ledger());
  EXPECT_EQ(reports::to_json(comparable(rest.summary)).dump(1), reports::to_json(comparable(whole.summary)).dump(1));
}

TEST(GuidedCampaign, TheCorpusFolderRunsFirstAndGrows) {
  TempDir dir;
  CampaignConfig first = guided_campaign(dir.path() / "first", 2);
  first.corpus_dir = dir.path() / "corpus";
  const CampaignResult a = run_campaign(first, reviewed_ledger());
  EXPECT_EQ(a.summary.guidance.replayed, 0u);
  EXPECT_GE(a.summary.guidance.saved, a.summary.guidance.added);
  const std::vector<Program> kept = read_corpus_folder(dir.path() / "corpus", {});
  EXPECT_EQ(kept.size(), a.summary.guidance.saved);

  CampaignConfig second = guided_campaign(dir.path() / "second", 2);
  second.corpus_dir = first.corpus_dir;
  second.seed = 22;
  const CampaignResult b = run_campaign(second, reviewed_ledger());
  EXPECT_EQ(b.summary.guidance.replayed, std::min<std::uint64_t>(kept.size(), kGuidedCases));
}

}  // namespace
}  // namespace parity::engine
