// The handshake: what a backend declares is read exactly, and every way of getting it wrong is refused with a
// message that names the field.
#include <gtest/gtest.h>

#include "protocol/handshake.h"

namespace parity::protocol {

namespace {

using nlohmann::json;

json answer() {
  return {{"type", "hello"},
          {"protocol", kProtocolVersion},
          {"library", {{"name", "tiny"}, {"version", "0.1"}}},
          {"ops", {"rand", "add", "sum"}},
          {"dtypes", {"float32", "float64"}},
          {"devices", {"cpu"}},
          {"observations", {"values", "layout", "errors"}},
          {"features", json::array()}};
}

// The refusal's message, or "" when the answer was accepted.
std::string refusal(const json& j) {
  try {
    parse_hello_answer(j);
    return "";
  } catch (const ProtocolError& e) {
    return e.what();
  }
}

TEST(Handshake, ReadsWhatTheBackendDeclares) {
  const Capabilities c = parse_hello_answer(answer());
  EXPECT_EQ(c.library, "tiny");
  EXPECT_EQ(c.version, "0.1");
  EXPECT_TRUE(c.runs(program::OpId::Add));
  EXPECT_FALSE(c.runs(program::OpId::Mul));
  EXPECT_TRUE(c.has_dtype(program::DType::Float64));
  EXPECT_FALSE(c.has_dtype(program::DType::Int64));
  EXPECT_FALSE(c.has_device(program::Device::CUDA));
  EXPECT_TRUE(c.observations.has(judge::Observation::Values));
  EXPECT_FALSE(c.observations.has(judge::Observation::Version));
  EXPECT_FALSE(c.python);
}

TEST(Handshake, AnswerOfEverythingReadsBackAsEverything) {
  const Capabilities all = Capabilities::everything("impl", "1");
  const Capabilities back = parse_hello_answer(hello_answer(all));
  EXPECT_EQ(hello_answer(back), hello_answer(all));
  EXPECT_TRUE(back.observations.all());
}

TEST(Handshake, RequestListsEveryOpAndDtype) {
  const json r = hello_request();
  EXPECT_EQ(r.at("ops").size(), program::op_table().size());
  EXPECT_EQ(r.at("dtypes").size(), std::size(program::kAllDTypes));
}

TEST(Handshake, RefusesWhatParityCannotUse) {
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& j) { j["protocol"] = 2; }, "speaks protocol 2"},
      {[](json& j) { j["type"] = "started"; }, "\"type\""},
      {[](json& j) { j["ops"] = {"rand", "frobnicate"}; }, "\"frobnicate\""},
      {[](json& j) { j["ops"] = {"add", "sum"}; }, "no factory"},
      {[](json& j) { j["dtypes"] = {"float8"}; }, "\"float8\""},
      {[](json& j) { j["dtypes"] = json::array(); }, "is empty"},
      {[](json& j) { j["devices"] = {"cuda"}; }, "must include \"cpu\""},
      {[](json& j) { j["observations"] = {"colour"}; }, "\"colour\""},
      {[](json& j) { j["features"] = {"telepathy"}; }, "\"telepathy\""},
      {[](json& j) { j.erase("library"); }, "missing field \"library\""},
  };
  for (const auto& [spoil, expected] : cases) {
    json j = answer();
    spoil(j);
    const std::string why = refusal(j);
    EXPECT_NE(why.find(expected), std::string::npos) << "refusal: " << why;
  }
  EXPECT_NE(refusal(json::array()).find("must be a JSON object"), std::string::npos);
}

}  // namespace

}  // namespace parity::protocol
