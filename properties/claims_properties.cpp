// The seed claims (cli/claims/seed_claims.cpp), one test each: impl must reach LibTorch's verdict with
// the same observed value. What LibTorch says is not asserted (some claims are wrong and LibTorch refutes
// them); that the claim's program ran on LibTorch as the claim intends is, so a broken check cannot pass.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "cli/claims/claim.h"
#include "cli/claims/evaluate.h"
#include "properties/on_both_backends.h"

namespace parity::properties {
namespace {

using cli::claims::Claim;
using cli::claims::seed_claims;

std::string test_name(const std::string& id) {
  std::string s = id;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

std::string describe(const cli::claims::Verdict& v) {
  return std::string(v.holds ? "holds" : "refuted") + " (" + v.observed + ")";
}

class SeedClaim : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SeedClaim, ImplReachesLibTorchsVerdict) {
  const Claim& c = seed_claims().at(GetParam());
  const Trace lt_trace = judge::run(torch_backend(), c.program);
  const cli::claims::SideResult lt = cli::claims::judge(c, lt_trace);
  ASSERT_TRUE(lt.ran_as_intended()) << "claim " << c.id << " (" << c.source
                                    << ") does not run as intended on LibTorch: " << lt.problem << "\nprogram:\n"
                                    << generators::describe(c.program) << "libtorch trace:\n"
                                    << render(lt_trace);
  judge::Backend* impl = impl_backend();
  if (!impl) GTEST_SKIP() << "impl backend not available; LibTorch says the claim " << describe(lt.verdict);
  const Trace impl_trace = judge::run(*impl, c.program);
  const cli::claims::SideResult im = cli::claims::judge(c, impl_trace);
  EXPECT_EQ(im.verdict, lt.verdict) << "claim " << c.id << " (" << c.source << "): " << c.statement
                                    << "\n  libtorch: " << describe(lt.verdict) << "\n  impl:     "
                                    << describe(im.verdict) << "\nprogram:\n"
                                    << generators::describe(c.program) << "impl trace:\n"
                                    << render(impl_trace);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedClaim, ::testing::Range<std::size_t>(0, seed_claims().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return test_name(seed_claims().at(info.param).id);
                         });

// The registry itself: stable unique ids, sources named as the seed files are, steps that exist.
TEST(SeedClaimRegistry, WellFormed) {
  const std::regex id_form("[a-z0-9]+(-[a-z0-9]+)*");
  const std::regex source_form("[0-9]{3}_[0-9a-f]{16}\\.txt");
  std::set<std::string> ids;
  ASSERT_FALSE(seed_claims().empty());
  for (const Claim& c : seed_claims()) {
    EXPECT_TRUE(std::regex_match(c.id, id_form)) << c.id;
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
    EXPECT_TRUE(std::regex_match(c.source, source_form)) << c.id << ": " << c.source;
    for (const auto& s : c.also_in) {
      EXPECT_TRUE(std::regex_match(s, source_form)) << c.id << ": " << s;
      EXPECT_NE(s, c.source) << c.id;
    }
    EXPECT_FALSE(c.statement.empty()) << c.id;
    EXPECT_FALSE(c.program.steps.empty()) << c.id;
    EXPECT_TRUE(static_cast<bool>(c.check)) << c.id;
    for (int s : c.may_raise)
      EXPECT_TRUE(s >= 0 && static_cast<std::size_t>(s) < c.program.steps.size()) << c.id << ": step " << s;
  }
}

// The guard that keeps a broken claim from passing: a step outside may_raise that raises, or a check reading
// what the trace does not hold, is a problem; a may_raise step raising (and what depends on it skipped) is not.
TEST(SeedClaimMachinery, BrokenProgramsAreNoticed) {
  program::ProgramBuilder b;
  const int x = b.full({1}, 1.0, true);
  const int w = b.scalar(OpId::AddScalar_, x, 1.0);  // a leaf requiring grad written in place: raises
  const int after = b.unary(OpId::Neg, w);             // skipped: its input does not exist
  const Trace t = judge::run(torch_backend(), b.program());
  const auto ok_check = [](const Trace&) { return cli::claims::Verdict{true, "fine"}; };

  Claim unexpected{"unexpected-raise", "000_0000000000000000.txt", {}, "s", b.program(), {}, ok_check};
  const cli::claims::SideResult r1 = cli::claims::judge(unexpected, t);
  EXPECT_FALSE(r1.ran_as_intended());
  EXPECT_FALSE(r1.verdict.holds);
  EXPECT_NE(r1.problem.find("step 1 (add_scalar_) raised leaf_inplace"), std::string::npos) << r1.problem;

  Claim expected{"expected-raise", "000_0000000000000000.txt", {}, "s", b.program(), {w}, ok_check};
  const cli::claims::SideResult r2 = cli::claims::judge(expected, t);
  EXPECT_TRUE(r2.ran_as_intended()) << r2.problem;
  EXPECT_EQ(r2.verdict, (cli::claims::Verdict{true, "fine"}));

  Claim reads_missing{"reads-missing", "000_0000000000000000.txt", {}, "s", b.program(), {w},
                      [after](const Trace& tr) { return cli::claims::Verdict{true, cli::claims::made(tr, after).grad_fn}; }};
  const cli::claims::SideResult r3 = cli::claims::judge(reads_missing, t);
  EXPECT_FALSE(r3.ran_as_intended());
  EXPECT_FALSE(r3.verdict.holds);
  EXPECT_NE(r3.problem.find("could not read"), std::string::npos) << r3.problem;

  const cli::claims::ClaimResult both = cli::claims::judge(expected, t, t);
  EXPECT_TRUE(both.agrees);
  EXPECT_FALSE(cli::claims::combine(r2, cli::claims::no_trace("crash")).agrees);
}

}  // namespace
}  // namespace parity::properties
