// engine/: the campaign engine called directly, without the parity binary: case seeding, evaluation in a child
// process and in this one, the isolation of crashes and hangs, a planted campaign end to end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/campaign.h"
#include "engine/case_seed.h"
#include "engine/evaluate.h"
#include "engine/evaluation_process.h"
#include "engine/isolation.h"
#include "engine/worker_pool.h"
#include "engine/worker_protocol.h"
#include "files/input_file.h"
#include "impl_backend/planted_faults.h"
#include "judge/compare.h"
#include "judge/trace_json.h"
#include "program/json.h"
#include "program/program_builder.h"
#include "reports/build_info.h"
#include "reports/error.h"
#include "reports/finding.h"
#include "reports/jsonl.h"
#include "tests/support/campaign.h"

namespace parity::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::in_process_planted_with;
using testing::reviewed_ledger;
using testing::TempDir;

// A campaign of cases 0..cases-1 of `seed` on two workers, into a fresh folder of `dir`.
CampaignConfig two_worker_campaign(const TempDir& dir, std::uint64_t seed, std::uint64_t cases) {
  CampaignConfig c;
  c.seed = seed;
  c.cases = cases;
  c.jobs = 2;
  c.out = dir.path() / "out";
  prepare_output(c.out, false);
  return c;
}

void expect_same(const Evaluation& a, const Evaluation& b) {
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.divergence, b.divergence);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].op, b.steps[i].op) << "step " << i;
    EXPECT_EQ(a.steps[i].impl, b.steps[i].impl) << "step " << i;
    EXPECT_EQ(a.steps[i].oracle, b.steps[i].oracle) << "step " << i;
    EXPECT_EQ(a.steps[i].impl_category, b.steps[i].impl_category) << "step " << i;
    EXPECT_EQ(a.steps[i].oracle_category, b.steps[i].oracle_category) << "step " << i;
  }
  EXPECT_EQ(a.coverage, b.coverage);
  // As JSON text: a NaN in a trace is not equal to itself.
  auto text = [](const std::optional<judge::Trace>& t) { return t ? judge::to_json(*t).dump() : "none"; };
  EXPECT_EQ(text(a.impl), text(b.impl));
  EXPECT_EQ(text(a.oracle), text(b.oracle));
  EXPECT_EQ(a.impl_version, b.impl_version);
  EXPECT_EQ(a.oracle_version, b.oracle_version);
}

TEST(EngineCaseSeed, DependsOnTheCampaignSeedAndIndexOnly) {
  // Pinned: a campaign seed must name the same programs from one build to the next (findings record it).
  EXPECT_EQ(case_seed(20261121, 0), 11699531047073331560ULL);
  EXPECT_EQ(case_seed(20261121, 3), 4156493627427804031ULL);
  EXPECT_NE(case_seed(20261121, 0), case_seed(20261121, 1));
  EXPECT_NE(case_seed(20261121, 5), case_seed(20261122, 5));
  EXPECT_EQ(case_size(0), 0);
  EXPECT_EQ(case_size(100), 100);
  EXPECT_EQ(case_size(101), 0);
  const generators::GenConfig config;
  for (std::uint64_t k : {0u, 7u, 55u}) {
    EXPECT_EQ(generate_case(99, k, config).value(), generate_case(99, k, config).value()) << "case " << k;
  }
  EXPECT_NE(generate_case(99, 55, config).value(), generate_case(98, 55, config).value());
}

// A worker marks its last answer (it exits after a sticky CUDA error) in the frame's length, which still reads
// whole, and a frame is complete only once all of its body is there.
TEST(EngineWorkerProtocol, AFrameSaysWhetherItIsTheWorkersLast) {
  const std::string body = "impl 1\tlibtorch 2\t0";
  for (bool last : {false, true}) {
    std::string buffer = frame(body, last);
    EXPECT_FALSE(complete_frame(buffer.substr(0, buffer.size() - 1)));
    buffer += frame("next");
    const auto f = complete_frame(buffer);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->body, body);
    EXPECT_EQ(f->last, last);
    EXPECT_EQ(f->size(), kFrameHeader + body.size());
    const auto next = complete_frame(buffer.substr(f->size()));
    ASSERT_TRUE(next);
    EXPECT_EQ(next->body, "next");
    EXPECT_FALSE(next->last);
  }
}

TEST(EngineEvaluate, InProcessAndIsolatedAgree) {
  std::vector<program::Program> programs;
  for (std::uint64_t k = 20; k < 26; ++k) programs.push_back(generate_case(3, k, {}).value());
  // Isolated first: this process must not hold torch state when it forks.
  std::vector<Evaluation> isolated;
  for (const auto& p : programs) isolated.push_back(evaluate_isolated(p, {10000ms, true, nullptr}));
  for (std::size_t i = 0; i < programs.size(); ++i) {
    SCOPED_TRACE("program " + std::to_string(i));
    EXPECT_EQ(isolated[i].outcome, Evaluation::Outcome::Completed);
    EXPECT_TRUE(isolated[i].impl && isolated[i].oracle);
    expect_same(isolated[i], evaluate_in_process(programs[i], true));
  }
}

// The answer an evaluating process sends is checked number by number: a cut-short or garbled one is a crash of
// that case (nothing is counted from it), and a program other than the one sent is caught by its ops.
TEST(EngineEvaluate, AGarbledAnswerIsACrashNotCounts) {
  const program::Program p = generate_case(3, 21, {}).value();
  Progress progress;
  const std::string answer = evaluate_to_text(p, false, judge::KeepValues::SummariseLarge, reports::Oracle::LibTorch, {}, progress);
  auto read = [&](const std::string& text, const program::Program* program) {
    ChildEnd end;
    end.output = text;
    return evaluation_from_end(end, program, {}, progress);
  };
  const Evaluation whole = read(answer, &p);
  ASSERT_EQ(whole.outcome, Evaluation::Outcome::Completed) << answer;
  EXPECT_EQ(whole.steps.size(), p.steps.size());
  expect_same(read(answer, nullptr), whole);  // a generated case: the answer's ops stand for the program

  const std::size_t counts = answer.rfind('\t') + 1;
  ASSERT_EQ(answer.find('\n'), std::string::npos) << "an agreeing case without traces answers one line";
  program::Program other = p;
  other.steps.front().op = other.steps.front().op == program::OpId::Rand ? program::OpId::Zeros : program::OpId::Rand;
  for (const auto& [text, program] : std::vector<std::pair<std::string, const program::Program*>>{
           {answer.substr(0, answer.size() - 2), &p},                     // cut short
           {answer + " 0", &p},                                          // a number too many
           {answer.substr(0, counts) + "9999 " + answer.substr(counts), nullptr},  // a step count past the limit
           {answer + "x", &p},                                           // a stray character
           {answer.substr(0, counts - 1), &p},                           // no counts
           {answer, &other},                                             // not the program sent
       }) {
    SCOPED_TRACE(text);
    const Evaluation e = read(text, program);
    EXPECT_EQ(e.outcome, Evaluation::Outcome::Crash);
    ASSERT_TRUE(e.divergence);
    EXPECT_NE(e.divergence->impl.find("ended without a complete result"), std::string::npos) << e.divergence->impl;
    EXPECT_TRUE(e.steps.empty());
  }
  EXPECT_THROW(read(R"({"fatal": "the impl backend is not available"})", &p), EvaluationError);
}

TEST(EngineIsolation, SaysHowTheChildEnded) {
  ChildEnd end = run_isolated([] { return std::string("result"); }, 10000ms);
  EXPECT_EQ(end.how, ChildEnd::How::Finished);
  EXPECT_EQ(end.output, "result");

  end = run_isolated([]() -> std::string { std::abort(); }, 10000ms);
  EXPECT_EQ(end.how, ChildEnd::How::Signal);
  EXPECT_EQ(end.code, SIGABRT);
  EXPECT_NE(end.describe(10000ms).find("killed by signal"), std::string::npos);

  end = run_isolated([]() -> std::string { ::_exit(3); }, 10000ms);
  EXPECT_EQ(end.how, ChildEnd::How::Exit);
  EXPECT_EQ(end.code, 3);

  end = run_isolated([] {
    std::this_thread::sleep_for(10s);
    return std::string();
  }, 100ms);
  EXPECT_EQ(end.how, ChildEnd::How::Timeout);
  EXPECT_EQ(end.describe(100ms), "no result after 100 ms");

  const std::atomic<bool> stop{true};
  end = run_isolated([] {
    std::this_thread::sleep_for(10s);
    return std::string();
  }, 10000ms, &stop);
  EXPECT_EQ(end.how, ChildEnd::How::Interrupted);
}

TEST(EngineCampaign, RefusesToMixWithAnEarlierCampaign) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  prepare_output(out, false);
  EXPECT_TRUE(fs::is_directory(out));
  std::ofstream(out / "run.json") << "{}";
  EXPECT_THROW(prepare_output(out, false), reports::ReportError);
  prepare_output(out, true);
  EXPECT_FALSE(fs::exists(out / "run.json"));
}

TEST(EngineCampaign, StaleKnownEntries) {
  const auto known = reports::KnownDivergences::from_json(
      {{"schema_version", 1},
       {"entries",
        {{{"signature", "mul:values"}, {"reason", "hit"}, {"expires", "2999-01-01"}},
         {{"signature", "add:values"}, {"reason", "never hit"}, {"expires", "2999-01-01"}},
         {{"signature", "neg:values"}, {"reason", "old"}, {"expires", "2000-01-01"}},
         {{"signature", "sum:values"}, {"reason", "other LibTorch"}, {"libtorch_max", "1.0"},
          {"expires", "2999-01-01"}}}}},
      "known.json");
  reports::RunSummary summary;
  summary.libtorch_version = "2.1.0";
  summary.known_divergence_hits = {{"mul:values", 2}, {"add:values", 0}};
  const auto stale = stale_known_entries(known, summary, "2024-06-01");
  ASSERT_EQ(stale.size(), 2u);
  EXPECT_EQ(stale[0].entry->signature, "add:values");
  EXPECT_NE(stale[0].why.find("matched no finding"), std::string::npos);
  EXPECT_EQ(stale[1].entry->signature, "neg:values");
  EXPECT_NE(stale[1].why.find("expired on 2000-01-01"), std::string::npos);
}

// A planted fault is found, shrunk while keeping its signature, and the same seed gives the same campaign
// whether its cases run in two persistent workers or in a child forked for each.
TEST(EngineCampaign, PlantedFaultIsFoundShrunkAndDeterministic) {
  if (!in_process_planted_with("mul=values")) return;
  ASSERT_EQ(impl_backend::planted_fault_texts(), std::vector<std::string>{"mul=values"});
  TempDir dir;
  auto campaign = [&](const std::string& name, Isolation isolation, int jobs) {
    CampaignConfig c;
    c.seed = 7;
    c.cases = 150;
    c.isolation = isolation;
    c.jobs = jobs;
    c.out = dir.path() / name;
    prepare_output(c.out, false);
    // The ledger in force, as in a real campaign: LibTorch's own bugs are not the planted fault's findings.
    CampaignResult result = run_campaign(c, reviewed_ledger());
    return std::pair(std::move(result), reports::read_jsonl(c.out / "findings.jsonl"));
  };
  auto [first, first_findings] = campaign("a", Isolation::Workers, 2);
  auto [second, second_findings] = campaign("b", Isolation::Fork, 1);
  EXPECT_EQ(first.summary.isolation, Isolation::Workers);
  EXPECT_EQ(first.summary.jobs, 2);
  EXPECT_EQ(second.summary.isolation, Isolation::Fork);

  const auto mul_values = judge::Signature::parse("mul:values").value();
  ASSERT_EQ(first.summary.groups.count(mul_values), 1u);
  EXPECT_EQ(first.summary.cases, 150u);
  EXPECT_GT(first.summary.unexpected_findings, 0u);
  EXPECT_EQ(first.summary.planted_faults, std::vector<std::string>{"mul=values"});
  ASSERT_FALSE(first_findings.records.empty());
  bool some_smaller = false;
  for (const auto& record : first_findings.records) {
    const reports::Finding f = reports::finding_from_json(record);
    if (f.expected) continue;  // a ledgered LibTorch bug the programs also reached
    EXPECT_EQ(f.signature, mul_values);
    EXPECT_LE(f.program.steps.size(), f.original_program_size);
    EXPECT_GT(f.shrink_evaluations, 0);
    some_smaller = some_smaller || f.program.steps.size() < f.original_program_size;
    // The shrunk program still diverges the same way.
    const Evaluation again = evaluate_isolated(f.program, {});
    ASSERT_TRUE(again.divergence);
    EXPECT_EQ(judge::signature(f.program, *again.divergence), f.signature);
  }
  EXPECT_TRUE(some_smaller);

  // Everything but the wall time and how the cases were run agrees.
  for (auto* s : {&first.summary, &second.summary}) {
    s->seconds = s->cases_per_second = s->shrink_seconds = 0;
    s->isolation = Isolation::Workers;
    s->jobs = 0;
  }
  EXPECT_EQ(first.summary, second.summary);
  EXPECT_EQ(first_findings.records, second_findings.records);
}

// Expects every unexpected group of a planted campaign to be at `op`; returns the findings of `kind` among them
// and (in `all`) of any kind.
std::size_t unexpected_at(const reports::RunSummary& s, std::string_view op, judge::DivergenceKind kind,
                          std::size_t* all = nullptr) {
  std::size_t of_kind = 0, total = 0;
  for (const auto& [sig, group] : s.groups) {
    if (group.expected) continue;
    EXPECT_EQ(sig.op, op) << sig.to_string();
    total += group.count;
    if (sig.kind == kind) of_kind += group.count;
  }
  if (all) *all = total;
  return of_kind;
}

// A planted fault that only rewords impl's errors of one op is found, and only as message divergences of that op:
// the category still agrees, so nothing but the message comparison can see it.
TEST(EngineCampaign, APlantedRewordingIsFoundAsMessageDivergencesOnly) {
  if (!in_process_planted_with("permute=message")) return;
  TempDir dir;
  const CampaignConfig c = two_worker_campaign(dir, 7, 1500);
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  std::size_t all = 0;
  const std::size_t reworded = unexpected_at(r.summary, "permute", judge::DivergenceKind::Message, &all);
  EXPECT_GT(reworded, 0u);
  EXPECT_EQ(reworded, all);  // message divergences only
  for (const auto& record : reports::read_jsonl(c.out / "findings.jsonl").records) {
    const reports::Finding f = reports::finding_from_json(record);
    if (f.expected) continue;
    EXPECT_NE(f.divergence.impl.find("reworded by planted fault permute=message"), std::string::npos);
    EXPECT_EQ(f.divergence.impl_category, f.divergence.oracle_category);
  }
}

// An in-place op that returns another tensor over the same memory (not `self`) is found at that op; only
// identity sees it where the operand does not require grad (storage, version and values all agree).
TEST(EngineCampaign, APlantedFreshResultOfAnInPlaceOpIsFoundByIdentity) {
  if (!in_process_planted_with("mul_scalar_=fresh")) return;
  TempDir dir;
  const CampaignConfig c = two_worker_campaign(dir, 7, 1500);
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  EXPECT_GT(unexpected_at(r.summary, "mul_scalar_", judge::DivergenceKind::Identity), 0u);
}

// An op that writes an operand its schema does not annotate as written is found at that op, by the schema
// check: nothing else observes the operand at that step.
TEST(EngineCampaign, APlantedWriteOfAnInputIsFoundBySchemaConformance) {
  if (!in_process_planted_with("exp=writes_input")) return;
  TempDir dir;
  const CampaignConfig c = two_worker_campaign(dir, 7, 1500);
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  EXPECT_GT(unexpected_at(r.summary, "exp", judge::DivergenceKind::Schema), 0u);
}

// A campaign judged by impl on the CPU, end to end (workers, confirmation, shrinking, records). Run on the CPU
// here, where both sides are the same code: the planted fault, which breaks the impl side only, is then the one
// thing that can diverge, and LibTorch's known differences (the ledger) neither appear nor count.
TEST(EngineCampaign, JudgedByImplOnTheCpuFindsOnlyImplsFault) {
  if (!in_process_planted_with("mul=values")) return;
  TempDir dir;
  CampaignConfig c;
  c.seed = 7;
  c.cases = 120;
  c.jobs = 2;
  c.out = dir.path() / "out";
  prepare_output(c.out, false);
  c.oracle = reports::Oracle::ImplCpu;
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  EXPECT_EQ(r.summary.oracle, reports::Oracle::ImplCpu);
  EXPECT_TRUE(r.summary.known_divergence_hits.empty()) << "the ledger is in force";
  EXPECT_EQ(r.summary.expected_findings, 0u);
  std::size_t findings = 0;
  for (const auto& record : reports::read_jsonl(c.out / "findings.jsonl").records) {
    const reports::Finding f = reports::finding_from_json(record);
    EXPECT_EQ(f.signature.to_string(), "mul:values");
    EXPECT_EQ(f.oracle, reports::Oracle::ImplCpu);
    ASSERT_TRUE(f.oracle_trace);
    EXPECT_EQ(f.oracle_trace->backend, "impl-cpu");
    ++findings;
  }
  EXPECT_GT(findings, 0u);
  EXPECT_EQ(r.summary.unexpected_findings, r.summary.findings);
  const auto run = nlohmann::json::parse(files::read_text_file(c.out / "run.json"));
  EXPECT_EQ(run.at("oracle"), "impl-cpu");
}

// Persistent workers give what a child forked per case gives, program by program, in whatever order they finish.
TEST(EngineWorkers, AgreeWithAChildPerCase) {
  std::vector<program::Program> programs;
  for (std::uint64_t k = 30; k < 42; ++k) programs.push_back(generate_case(5, k, {}).value());
  std::vector<Evaluation> forked;
  for (const auto& p : programs) forked.push_back(evaluate_isolated(p, {10000ms, true, nullptr}));
  WorkerPool pool({2, {10000ms, true, nullptr, std::size_t{4} << 30}});
  std::map<WorkerPool::Ticket, std::size_t> which;
  for (std::size_t i = 0; i < programs.size(); ++i) which[pool.submit(programs[i], true)] = i;
  std::size_t done = 0;
  while (auto d = pool.wait()) {
    SCOPED_TRACE("program " + std::to_string(which.at(d->ticket)));
    expect_same(d->evaluation, forked[which.at(d->ticket)]);
    ++done;
  }
  EXPECT_EQ(done, programs.size());
  EXPECT_EQ(pool.workers_started(), 2u);  // nothing died: no worker was replaced
}

// The oracle asked for judges every evaluation, in each of the three ways of running one. On the CPU, impl judged
// by impl on the CPU agrees with itself: both sides run the same code.
TEST(EngineEvaluate, TheOracleAskedForJudges) {
  const program::Program p = generate_case(7, 3, {}).value();
  EvalOptions options{10000ms, true, nullptr};
  options.oracle = reports::Oracle::ImplCpu;
  const Evaluation forked = evaluate_isolated(p, options);
  WorkerPool pool({1, options});
  pool.submit(p, true);
  const Evaluation worked = pool.wait().value().evaluation;
  const Evaluation here = evaluate_in_process(p, true, reports::Oracle::ImplCpu);
  for (const Evaluation* ev : {&forked, &worked, &here}) {
    EXPECT_EQ(ev->outcome, Evaluation::Outcome::Completed);
    EXPECT_FALSE(ev->divergence);
    EXPECT_NE(ev->oracle_version.find("parity-impl on the CPU"), std::string::npos) << ev->oracle_version;
    ASSERT_TRUE(ev->oracle);
    EXPECT_EQ(ev->oracle->backend, "impl-cpu");
  }
  EXPECT_EQ(evaluate_in_process(p, true).oracle->backend, "libtorch") << "LibTorch judges by default";
}

// A case named by (seed, k, generator config) and generated in the worker is evaluated as the same program
// generated here and sent: a campaign judges, shrinks and records what the worker ran. The config travels too.
TEST(EngineWorkers, ACaseGeneratedInTheWorkerIsTheProgramGeneratedHere) {
  WorkerPool pool({1, {10000ms, false, nullptr, std::size_t{4} << 30}});
  generators::GenConfig few_steps;
  few_steps.max_steps = 3;
  few_steps.invalid_share = 0.3;
  for (const generators::GenConfig& config : {generators::GenConfig{}, few_steps}) {
    for (std::uint64_t k = 40; k < 52; ++k) {
      SCOPED_TRACE("case " + std::to_string(k) + ", max_steps " + std::to_string(config.max_steps));
      const program::Program p = generate_case(13, k, config).value();
      const auto sent = pool.submit(p);
      const auto named = pool.submit(GeneratedCase{13, k, config});
      std::map<WorkerPool::Ticket, Evaluation> results;
      while (auto d = pool.wait()) results.emplace(d->ticket, std::move(d->evaluation));
      ASSERT_EQ(results.size(), 2u);
      expect_same(results[named], results[sent]);
      ASSERT_EQ(results[named].steps.size(), p.steps.size());
      for (std::size_t i = 0; i < p.steps.size(); ++i) EXPECT_EQ(results[named].steps[i].op, p.steps[i].op);
    }
  }
}

// Each process-level fault planted on `neg` ends exactly the case that runs it, as a finding of its kind at that
// step; the worker is replaced and the next case runs normally.
struct ProcessFault {
  const char* plant;
  Evaluation::Outcome outcome;
  judge::DivergenceKind kind;
  const char* says;
  const char* signature;
};

void expect_isolated(const ProcessFault& fault) {
  program::ProgramBuilder fine, faulty;
  const int a = fine.rand({2, 3});
  fine.step(program::OpId::Abs, {a});
  const int b = faulty.rand({2, 3});
  faulty.step(program::OpId::Neg, {b});
  WorkerPool pool({1, {3000ms, false, nullptr, std::size_t{4} << 30}});
  const auto before = pool.submit(fine.program());
  const auto bad = pool.submit(faulty.program());
  const auto after = pool.submit(fine.program());
  std::map<WorkerPool::Ticket, Evaluation> results;
  while (auto d = pool.wait()) results.emplace(d->ticket, std::move(d->evaluation));
  ASSERT_EQ(results.size(), 3u);
  for (auto t : {before, after}) {
    EXPECT_EQ(results[t].outcome, Evaluation::Outcome::Completed);
    EXPECT_FALSE(results[t].divergence);
    EXPECT_EQ(results[t].steps.size(), 2u);
  }
  const Evaluation& e = results[bad];
  EXPECT_EQ(e.outcome, fault.outcome);
  ASSERT_TRUE(e.divergence);
  EXPECT_EQ(e.divergence->kind, fault.kind);
  EXPECT_EQ(e.divergence->step, 1);
  EXPECT_NE(e.divergence->impl.find(fault.says), std::string::npos) << e.divergence->impl;
  EXPECT_NE(e.divergence->impl.find("while running impl at step 1"), std::string::npos) << e.divergence->impl;
  EXPECT_EQ(judge::signature(faulty.program(), *e.divergence).to_string(), fault.signature);
  EXPECT_EQ(pool.workers_started(), 2u);  // the faulty case's worker was replaced for the case after it
}

// A worker whose CUDA context broke (planted: `neg=breaks_device`) answers the case that broke it, exits, and the
// cases it already held run on a fresh worker: each answered once, as a worker that never broke would answer it.
// The faulty program has a cuda step (raising where there is no device), since only work on cuda can break one.
TEST(EngineWorkers, AWorkerWhoseDeviceBrokeIsReplacedLosingNoCase) {
  if (!in_process_planted_with("neg=breaks_device")) return;
  program::ProgramBuilder fine, faulty;
  fine.step(program::OpId::Abs, {fine.rand({2, 3})});
  program::Attrs on_cuda;
  on_cuda.device = program::Device::CUDA;
  on_cuda.sizes = {2};
  faulty.step(program::OpId::Zeros, {}, on_cuda);
  faulty.step(program::OpId::Neg, {faulty.rand({2, 3})});
  WorkerPool pool({1, {10000ms, false, nullptr, 0}});
  const Evaluation alone = evaluate_in_process(fine.program());
  std::vector<WorkerPool::Ticket> fines;
  fines.push_back(pool.submit(fine.program()));
  const auto bad = pool.submit(faulty.program());
  for (int i = 0; i < 4; ++i) fines.push_back(pool.submit(fine.program()));
  std::map<WorkerPool::Ticket, Evaluation> results;
  while (auto d = pool.wait()) EXPECT_TRUE(results.emplace(d->ticket, std::move(d->evaluation)).second);
  ASSERT_EQ(results.size(), fines.size() + 1);
  EXPECT_EQ(results[bad].outcome, Evaluation::Outcome::Completed);
  EXPECT_EQ(results[bad].steps.size(), 3u);
  for (auto t : fines) {
    SCOPED_TRACE("ticket " + std::to_string(t));
    expect_same(results[t], alone);
  }
  EXPECT_EQ(pool.workers_started(), 2u);  // the one that broke, and its replacement
}

TEST(EngineWorkers, PlantedCrashEndsOnlyItsCase) {
  if (!in_process_planted_with("neg=crash")) return;
  expect_isolated(
      {"neg=crash", Evaluation::Outcome::Crash, judge::DivergenceKind::Crash, "signal 11", "neg:crash:SIGSEGV"});
}

TEST(EngineWorkers, PlantedAbortEndsOnlyItsCase) {
  if (!in_process_planted_with("neg=abort")) return;
  expect_isolated(
      {"neg=abort", Evaluation::Outcome::Crash, judge::DivergenceKind::Crash, "signal 6", "neg:crash:SIGABRT"});
}

TEST(EngineWorkers, PlantedHangEndsOnlyItsCase) {
  if (!in_process_planted_with("neg=hang")) return;
  expect_isolated({"neg=hang", Evaluation::Outcome::Timeout, judge::DivergenceKind::Timeout, "no result after 3000 ms",
                   "neg:timeout"});
}

TEST(EngineWorkers, PlantedOutOfMemoryEndsOnlyItsCase) {
  if (!kAddressSpaceLimitSupported)
    GTEST_SKIP() << "an AddressSanitizer build caps no address space (engine/evaluation_process.h)";
  if (!in_process_planted_with("neg=oom")) return;
  expect_isolated({"neg=oom", Evaluation::Outcome::OutOfMemory, judge::DivergenceKind::OutOfMemory,
                   "memory limit of 4096 MiB", "neg:out_of_memory"});
}

// A campaign whose impl crashes on a common op still covers every case, records each crash as a finding of that
// case, and shrinks within its budget.
TEST(EngineCampaign, CrashingCasesDoNotStopTheCampaign) {
  if (!in_process_planted_with("add=crash")) return;
  TempDir dir;
  const CampaignConfig c = two_worker_campaign(dir, 11, 60);
  // The ledger in force, as in a real campaign: LibTorch's own bugs are not the planted fault's findings.
  const CampaignResult r = run_campaign(c, reviewed_ledger());
  EXPECT_EQ(r.summary.cases, 60u);
  EXPECT_GT(r.summary.crashes, 0u);
  EXPECT_LT(r.summary.crashes, 60u);  // the cases without add ran normally
  EXPECT_EQ(r.summary.findings_by_kind.at(judge::DivergenceKind::Crash), r.summary.crashes);
  const auto crash = judge::Signature::parse("add:crash:SIGSEGV").value();
  ASSERT_EQ(r.summary.groups.count(crash), 1u);
  EXPECT_EQ(r.summary.groups.at(crash).count, r.summary.crashes);
  // Only cases with an add can crash (one whose add is skipped, after an error it depends on, does not).
  std::uint64_t with_add = 0;
  for (std::uint64_t k = 0; k < 60; ++k) {
    const program::Program p = generate_case(11, k, {}).value();
    with_add += std::any_of(p.steps.begin(), p.steps.end(),
                            [](const program::Step& s) { return s.op == program::OpId::Add; });
  }
  EXPECT_LE(r.summary.crashes, with_add);
  const auto findings = reports::read_jsonl(c.out / "findings.jsonl");
  ASSERT_FALSE(findings.records.empty());
  for (const auto& record : findings.records) {
    const reports::Finding f = reports::finding_from_json(record);
    if (f.expected) continue;  // a ledgered LibTorch bug the programs also reached
    EXPECT_EQ(f.signature, crash);
    EXPECT_LE(f.program.steps.size(), f.original_program_size);
  }
}

}  // namespace
}  // namespace parity::engine
