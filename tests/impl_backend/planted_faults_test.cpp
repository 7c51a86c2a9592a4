// impl_backend/planted_faults: the test-only switch that makes impl deliberately wrong is read strictly, so a
// typo cannot silently run a campaign without the bug it asked for.
#include "impl_backend/planted_faults.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>

namespace parity::impl_backend {
namespace {

using program::OpId;

TEST(PlantedFaults, ParsesAListOfOpAndKind) {
  auto faults = parse_planted_faults(" mul=values, neg = error ");
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0], (PlantedFault{OpId::Mul, PlantedFault::Kind::Values}));
  EXPECT_EQ(faults[1], (PlantedFault{OpId::Neg, PlantedFault::Kind::Error}));
  EXPECT_EQ(faults[0].text(), "mul=values");
  EXPECT_EQ(faults[1].text(), "neg=error");
  EXPECT_TRUE(parse_planted_faults("").empty());
  EXPECT_EQ(parse_planted_faults("mul_=fresh").at(0), (PlantedFault{OpId::Mul_, PlantedFault::Kind::Fresh}));
  EXPECT_EQ(parse_planted_faults("exp=writes_input").at(0), (PlantedFault{OpId::Exp, PlantedFault::Kind::WritesInput}));
}

// Reports record the faults in force (planted_faults); the schema's pattern must accept every kind there is, and
// only those.
TEST(PlantedFaults, TheReportSchemaAcceptsEveryKind) {
  const std::string path = std::string(PARITY_SOURCE_DIR) + "/reports/schema/common.schema.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  const std::regex pattern(
      nlohmann::json::parse(in).at("$defs").at("planted_faults").at("items").at("pattern").get<std::string>());
  for (std::string_view kind : planted_fault_kind_names()) {
    const std::string text = "mul_=" + std::string(kind);
    EXPECT_TRUE(std::regex_search(text, pattern)) << text << " is refused by " << path;
  }
  EXPECT_FALSE(std::regex_search(std::string("mul=oops"), pattern));
}

TEST(PlantedFaults, RefusesWhatItCannotRead) {
  auto message = [](std::string_view spec) {
    try {
      parse_planted_faults(spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_NE(message("mul").find("has no '='"), std::string::npos);
  EXPECT_NE(message("frobnicate=values").find("names no op"), std::string::npos);
  EXPECT_NE(message("mul=wrong").find("names no fault kind"), std::string::npos);
  EXPECT_NE(message("mul=wrong").find("PARITY_PLANT"), std::string::npos);
  EXPECT_NE(message("mul=values,mul=error").find("given twice"), std::string::npos);
  // Set, it must name faults: a blank value or a stray comma is a mistake (unset or "" plants nothing).
  EXPECT_NE(message(" ").find("names no fault"), std::string::npos);
  EXPECT_NE(message("mul=values,").find("has an empty item"), std::string::npos);
  EXPECT_NE(message(",mul=values").find("has an empty item"), std::string::npos);
  EXPECT_NE(message("mul=values,,neg=error").find("has an empty item"), std::string::npos);
  // mul makes a new tensor: there is no `self` it could fail to return.
  EXPECT_NE(message("mul=fresh").find("does not return its operand itself"), std::string::npos);
  EXPECT_NE(message("exp_=writes_input").find("may write one anyway"), std::string::npos);
  EXPECT_NE(message("zeros=writes_input").find("has no operand"), std::string::npos);
  // A combination fault only where its condition can hold.
  EXPECT_NE(message("sum=edge_scalar").find("takes no scalar"), std::string::npos);
  EXPECT_NE(message("mul=shared_storage").find("not in place with two operands"), std::string::npos);
  EXPECT_NE(message("backward=stale_retained_view").find("another op than retain_grad"), std::string::npos);
  EXPECT_NE(message("zeros=view_written").find("no operand"), std::string::npos);
  EXPECT_NE(message("clone=grad_memo").find("another op than deepcopy"), std::string::npos);
}

TEST(PlantedFaults, CombinationKindsAreNeitherProcessFaultsNorPlain) {
  const auto faults = parse_planted_faults(
      "retain_grad=stale_retained_view,sum=view_written,fill_=edge_scalar,mul_=shared_storage,"
      "add_=zero_dim_other,deepcopy=grad_memo");
  ASSERT_EQ(faults.size(), 6u);
  for (const auto& f : faults) {
    EXPECT_TRUE(is_combination_fault(f.kind)) << f.text();
    EXPECT_FALSE(is_process_fault(f.kind)) << f.text();
    EXPECT_EQ(parse_planted_faults(f.text()).at(0), f);
  }
  EXPECT_FALSE(is_combination_fault(PlantedFault::Kind::Values));
}

}  // namespace
}  // namespace parity::impl_backend
