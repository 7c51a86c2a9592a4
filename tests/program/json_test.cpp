// JSON codec: programs, traces and divergences round-trip; hostile or broken documents are refused with a
// message that names the step and the field.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "judge/trace_json.h"
#include "program/json.h"

namespace parity::program {

using judge::Divergence;
using judge::divergence_from_json;
using judge::DivergenceKind;
using judge::ErrorCategory;
using judge::GradObs;
using judge::StepObs;
using judge::TensorObs;
using judge::Trace;
using judge::trace_from_json;

namespace {

using nlohmann::json;

// Non-default values for exactly the attributes an op lists (the others must stay default to round-trip).
Attrs attrs_for(const OpSpec& op) {
  Attrs a;
  for (Attr at : op.attrs) {
    switch (at) {
      case Attr::Sizes: case Attr::ViewSizes: case Attr::ExpandSizes: a.sizes = {3, 2}; break;
      case Attr::Strided: a.sizes = {2, 3}; a.strides = {1, 2}; a.offset = 1; break;
      case Attr::Dims: a.dims = {1, 0}; break;
      case Attr::Dim: a.dim = -1; break;
      case Attr::Dim1: a.dim1 = 1; break;
      case Attr::Start: a.start = 1; break;
      case Attr::End: a.end = 5; break;
      case Attr::Step: a.step = 2; break;
      case Attr::Index: a.index = -2; break;
      case Attr::Length: a.length = 1; break;
      case Attr::Scalar: a.scalar = {Scalar::Kind::Float, -0.25}; break;
      case Attr::MemoryFormat: a.memory_format = MemoryFormat::ChannelsLast; break;
      case Attr::DType: a.dtype = DType::Float64; break;
      case Attr::RequiresGrad: a.requires_grad = true; break;
      case Attr::Keepdim: a.keepdim = true; break;
      case Attr::RetainGraph: a.retain_graph = true; break;
      case Attr::Seed: a.seed = 12345; break;
      case Attr::Offset: a.offset = -1; break;
      case Attr::Min: a.min = Scalar{Scalar::Kind::Int, 2}; break;  // max stays None: null round-trips
      case Attr::Max: break;
      case Attr::Size: a.size = 3; break;
      case Attr::Chunks: a.chunks = 2; break;
      case Attr::Copy: a.copy = true; break;
      case Attr::Accumulate: a.accumulate = true; break;
      case Attr::AllowUnused: a.allow_unused = true; break;
      case Attr::CreateGraph: a.create_graph = true; break;
      case Attr::Memo: a.memo = 7; break;
      case Attr::SplitSizes: a.dims = {2, 0, 1}; break;
      case Attr::Device: a.device = Device::CUDA; break;
      case Attr::LikeDevice: a.like_device = Device::CUDA; break;
      case Attr::High: a.high = 65505; break;
      case Attr::LiteralSizes: a.sizes = {2, 2}; break;
      // Each kind, and the values only a kind-tagged scalar keeps apart: -0, NaN.
      case Attr::Elements:
        a.elements = {{Scalar::Kind::Int, 3}, {Scalar::Kind::Float, -0.0}, {Scalar::Kind::Bool, 1},
                      {Scalar::Kind::Float, std::numeric_limits<double>::quiet_NaN()}};
        break;
    }
  }
  return a;
}

Step rand_step(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides) {
  Step s;
  s.op = OpId::Rand;
  s.attrs.sizes = std::move(sizes);
  s.attrs.strides = std::move(strides);
  s.attrs.seed = 7;
  return s;
}

Program every_op_program() {
  Program p;
  p.steps.push_back(rand_step({2, 3}, {3, 1}));
  for (const OpSpec& op : op_table()) {
    Step s;
    s.op = op.id;
    s.inputs.assign(op.arity, 0);
    s.attrs = attrs_for(op);
    s.grad_enabled = p.steps.size() % 2 == 0;
    p.steps.push_back(s);
  }
  return p;
}

// Decodes `j` expecting a JsonError whose message contains every fragment.
void expect_error(const json& j, std::initializer_list<std::string_view> fragments) {
  try {
    program_from_json(j);
    ADD_FAILURE() << "no error for " << j.dump().substr(0, 200);
  } catch (const JsonError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    for (auto f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing \"" << f << "\" in: " << what;
  }
}

json one_step(json step) { return {{"schema_version", 1}, {"steps", json::array({std::move(step)})}}; }

json rand_json(json sizes, json strides, json offset = 0) {
  return {{"op", "rand"},
          {"inputs", json::array()},
          {"grad_enabled", true},
          {"attrs",
           {{"sizes", sizes}, {"strides", strides}, {"offset", offset}, {"dtype", "float32"},
            {"requires_grad", false}, {"seed", 1}}}};
}

TEST(JsonProgram, EveryOpRoundTrips) {
  Program p = every_op_program();
  json j = to_json(p);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(program_from_json(j), p);
  // Through text too, as files hold it.
  EXPECT_EQ(program_from_json(json::parse(j.dump())), p);
}

TEST(JsonProgram, WritesOnlyTheListedAttributes) {
  Program p = every_op_program();
  json j = to_json(p);
  for (std::size_t i = 1; i < p.steps.size(); ++i) {
    const OpSpec& op = spec(p.steps[i].op);
    std::size_t expected = 0;
    for (Attr a : op.attrs) expected += a == Attr::Strided ? 3 : 1;
    EXPECT_EQ(j["steps"][i]["attrs"].size(), expected) << op.name;
    EXPECT_EQ(j["steps"][i]["op"], std::string(op.name));
  }
  const json& rand = j["steps"][0]["attrs"];
  EXPECT_TRUE(rand.contains("strides"));
  EXPECT_TRUE(rand.contains("offset"));
  EXPECT_EQ(rand["dtype"], "float32");
}

TEST(JsonProgram, AttributeSpellings) {
  Program p;
  p.steps.push_back(rand_step({2, 3, 1, 1}, {3, 1, 1, 1}));
  Step c;
  c.op = OpId::Clone;
  c.inputs = {0};
  c.attrs.memory_format = MemoryFormat::ChannelsLast;
  p.steps.push_back(c);
  Step s;
  s.op = OpId::AddScalar;
  s.inputs = {0};
  s.attrs.scalar = {Scalar::Kind::Int, 3};
  p.steps.push_back(s);
  json j = to_json(p);
  EXPECT_EQ(j["steps"][1]["attrs"]["memory_format"], "channels_last");
  EXPECT_EQ(j["steps"][2]["attrs"]["scalar"], (json{{"kind", "int"}, {"value", 3}}));
  EXPECT_EQ(program_from_json(j), p);
}

// A boolean attribute a program leaves out is false, PyTorch's default for each of them: programs written before
// create_graph existed still read. A boolean of the wrong type is still refused.
TEST(JsonProgram, AnAbsentBooleanAttributeIsFalse) {
  Program p;
  p.steps.push_back(rand_step({1}, {1}));
  Step b;
  b.op = OpId::Backward;
  b.inputs = {0};
  b.attrs.retain_graph = true;
  p.steps.push_back(b);
  json j = to_json(p);
  j["steps"][1]["attrs"].erase("create_graph");
  EXPECT_EQ(program_from_json(j), p);
  j["steps"][1]["attrs"]["create_graph"] = "yes";
  expect_error(j, {"create_graph", "true or false"});
}

// A literal list holds one element per element of its sizes, and only sizes Python can nest.
TEST(ProgramJson, LiteralListMatchesItsSizes) {
  Program p;
  Step t;
  t.op = OpId::Tensor;
  t.attrs.sizes = {2, 0};
  p.steps.push_back(t);
  json j = to_json(p);
  EXPECT_EQ(program_from_json(j), p);
  j["steps"][0]["attrs"]["elements"].push_back({{"kind", "int"}, {"value", 1}});
  expect_error(j, {"step 0", "elements", "has 1 elements", "sizes [2, 0] has 0"});
  j["steps"][0]["attrs"]["sizes"] = {0, 1};
  expect_error(j, {"step 0", "sizes [0, 1]", "only the last can be 0"});
  j["steps"][0]["attrs"]["sizes"] = {1};
  j["steps"][0]["attrs"]["elements"][0]["kind"] = "complex";
  expect_error(j, {"elements\"[0]", "complex"});
}

// Devices are named, not numbered: "cpu" or "cuda", and null for a _like factory's device=None. Programs written
// before devices existed have no key and ran on the CPU; a device parity does not know is refused by name.
TEST(JsonProgram, Devices) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  p.steps[0].attrs.device = Device::CUDA;
  Step like;
  like.op = OpId::ZerosLike;
  like.inputs = {0};
  p.steps.push_back(like);
  Step to;
  to.op = OpId::ToDevice;
  to.inputs = {0};
  to.attrs.device = Device::CPU;
  p.steps.push_back(to);
  json j = to_json(p);
  EXPECT_EQ(j["steps"][0]["attrs"]["device"], "cuda");
  EXPECT_TRUE(j["steps"][1]["attrs"]["device"].is_null());
  EXPECT_EQ(j["steps"][2]["attrs"]["device"], "cpu");
  EXPECT_EQ(program_from_json(j), p);
  p.steps[1].attrs.like_device = Device::CPU;
  EXPECT_EQ(to_json(p)["steps"][1]["attrs"]["device"], "cpu");
  EXPECT_EQ(program_from_json(to_json(p)), p);

  json old = to_json(p);
  old["steps"][0]["attrs"].erase("device");
  old["steps"][1]["attrs"].erase("device");
  Program cpu = p;
  cpu.steps[0].attrs.device = Device::CPU;
  cpu.steps[1].attrs.like_device.reset();
  EXPECT_EQ(program_from_json(old), cpu);

  old["steps"][2]["attrs"]["device"] = "tpu";
  expect_error(old, {"step 2", "device", "\"tpu\"", "cpu or cuda"});
  old["steps"][2]["attrs"]["device"] = 1;
  expect_error(old, {"step 2", "device"});
}

TEST(JsonProgram, LargeSeedsAreStrings) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  p.steps[0].attrs.seed = (std::uint64_t{1} << 53);
  EXPECT_TRUE(to_json(p)["steps"][0]["attrs"]["seed"].is_number());
  p.steps[0].attrs.seed = (std::uint64_t{1} << 53) + 1;
  EXPECT_TRUE(to_json(p)["steps"][0]["attrs"]["seed"].is_string());
  EXPECT_EQ(program_from_json(to_json(p)), p);
  p.steps[0].attrs.seed = std::numeric_limits<std::uint64_t>::max();
  json j = to_json(p);
  EXPECT_EQ(j["steps"][0]["attrs"]["seed"], "18446744073709551615");
  EXPECT_EQ(program_from_json(j), p);
  // A small seed written as a string is read too.
  j["steps"][0]["attrs"]["seed"] = "42";
  EXPECT_EQ(program_from_json(j).steps[0].attrs.seed, 42u);
  j["steps"][0]["attrs"]["seed"] = "-1";
  expect_error(j, {"step 0 (rand)", "seed"});
  j["steps"][0]["attrs"]["seed"] = "18446744073709551616";
  expect_error(j, {"seed"});
}

TEST(JsonProgram, NonFiniteScalarsRoundTrip) {
  for (double v : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), -0.25}) {
    Program p;
    p.steps.push_back(rand_step({2}, {1}));
    Step s;
    s.op = OpId::MulScalar;
    s.inputs = {0};
    s.attrs.scalar = {Scalar::Kind::Float, v};
    p.steps.push_back(s);
    Program back = program_from_json(json::parse(to_json(p).dump()));
    double w = back.steps[1].attrs.scalar.value;
    if (std::isnan(v)) EXPECT_TRUE(std::isnan(w));
    else EXPECT_EQ(w, v);
  }
  EXPECT_EQ(number_to_json(std::nan("")), "nan");
  EXPECT_EQ(number_to_json(-INFINITY), "-inf");
  EXPECT_EQ(number_from_json("inf"), INFINITY);
  EXPECT_EQ(number_from_json(1.5), 1.5);
  EXPECT_THROW(number_from_json("NaN!"), JsonError);
  EXPECT_THROW(number_from_json(json::array()), JsonError);
}

TEST(JsonProgram, InvalidStepsThatBackendsMustJudgeAreAccepted) {
  // Negative sizes and out-of-range dims are legitimate steps whose error the backends compare.
  json j = one_step(rand_json({2, -3}, {1, 1}));
  EXPECT_NO_THROW(program_from_json(j));
  j["steps"].push_back({{"op", "transpose"}, {"inputs", {0}}, {"attrs", {{"dim", 7}, {"dim1", -9}}}});
  Program p = program_from_json(j);
  EXPECT_EQ(p.steps[1].attrs.dim, 7);
  EXPECT_TRUE(p.steps[1].grad_enabled);  // grad_enabled defaults to true
}

TEST(JsonProgram, RefusesBadDocuments) {
  json good = one_step(rand_json({2, 3}, {3, 1}));
  ASSERT_NO_THROW(program_from_json(good));

  expect_error(json::array(), {"program", "object"});
  json j = good;
  j.erase("schema_version");
  expect_error(j, {"schema_version", "missing"});
  j = good;
  j["schema_version"] = 2;
  expect_error(j, {"schema_version 2", "newer"});
  j = good;
  j["schema_version"] = "1";
  expect_error(j, {"schema_version", "integer"});
  j = good;
  j["steps"] = json::object();
  expect_error(j, {"steps", "array"});

  j = good;
  j["steps"][0]["op"] = "frobnicate";
  expect_error(j, {"step 0", "unknown op \"frobnicate\"", "parity list"});
  j = good;
  j["steps"][0].erase("op");
  expect_error(j, {"step 0", "missing field \"op\""});
  j = good;
  j["steps"][0]["attrs"]["dtype"] = "complex64";
  expect_error(j, {"step 0 (rand)", "dtype", "complex64"});
  for (DType d : kAllDTypes) expect_error(j, {std::string(to_string(d))});  // the refusal names every accepted dtype
  j = good;
  j["steps"][0]["attrs"]["sizes"] = {2, "3"};
  expect_error(j, {"step 0 (rand)", "sizes", "integer"});
  j = good;
  j["steps"][0]["attrs"]["requires_grad"] = 1;
  expect_error(j, {"requires_grad", "true or false"});
  j = good;
  j["steps"][0]["attrs"]["colour"] = "red";
  expect_error(j, {"unknown attribute \"colour\"", "rand takes"});
  j = good;
  j["steps"][0]["attrs"].erase("strides");
  expect_error(j, {"step 0 (rand)", "missing field \"strides\""});
  j = good;
  j["steps"][0]["grad_enabled"] = "yes";
  expect_error(j, {"grad_enabled"});
}

TEST(JsonProgram, RefusesBadOperands) {
  json j = one_step(rand_json({2, 3}, {3, 1}));
  j["steps"].push_back({{"op", "add"}, {"inputs", {0}}, {"attrs", json::object()}});
  expect_error(j, {"step 1 (add)", "inputs", "takes 2"});
  j["steps"][1]["inputs"] = {0, 1};
  expect_error(j, {"step 1 (add)", "value 1", "earlier"});
  j["steps"][1]["inputs"] = {0, -1};
  expect_error(j, {"step 1 (add)", "earlier"});
  j["steps"][1]["inputs"] = {0, 1.5};
  expect_error(j, {"inputs", "integer"});
  j["steps"][1]["inputs"] = {0, 0};
  EXPECT_NO_THROW(program_from_json(j));
}

TEST(JsonProgram, RefusesAbsurdShapes) {
  expect_error(one_step(rand_json({100000, 100000}, {100000, 1})), {"step 0 (rand)", "absurd"});
  // Overflowing products and extents must not wrap around into small numbers.
  expect_error(one_step(rand_json({1 << 30, 1 << 30, 1 << 30, 16}, {0, 0, 0, 0})), {"absurd"});
  expect_error(one_step(rand_json({3, 2}, {std::int64_t{1} << 62, 1})), {"absurd layout"});
  expect_error(one_step(rand_json({2}, {1}, std::numeric_limits<std::int64_t>::min())), {"absurd layout"});
  expect_error(one_step(rand_json({2, 2}, {1 << 20, 1})), {"absurd layout"});
  expect_error(one_step(rand_json({std::numeric_limits<std::int64_t>::min()}, {1})), {"absurd shape"});
  // Sizes without a stride still count towards the extent.
  expect_error(one_step(rand_json({2, 1 << 20}, {1})), {"absurd"});
  // Too many dims.
  expect_error(one_step(rand_json({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1})),
               {"sizes", "9 entries", "limit is 8"});
  json zeros = {{"op", "zeros"}, {"inputs", json::array()},
                {"attrs", {{"sizes", {4096, 4096}}, {"dtype", "float32"}, {"requires_grad", false}}}};
  expect_error(one_step(zeros), {"step 0 (zeros)", "absurd shape [4096, 4096]"});
  json arange = {{"op", "arange"}, {"inputs", json::array()}, {"attrs", {{"end", 1LL << 40}, {"dtype", "int64"}}}};
  expect_error(one_step(arange), {"absurd"});
  // Two shapes within bounds that broadcast to an absurd one.
  json j = one_step(rand_json({1024, 1}, {1, 1}));
  j["steps"].push_back(rand_json({1, 1024 * 2}, {1, 1}));
  j["steps"].push_back({{"op", "mul"}, {"inputs", {0, 1}}});
  expect_error(j, {"step 2 (mul)", "absurd"});
}

TEST(JsonProgram, RefusesTooManySteps) {
  json steps = json::array();
  for (std::size_t i = 0; i <= kMaxSteps; ++i) steps.push_back(rand_json({1}, {1}));
  expect_error({{"schema_version", 1}, {"steps", steps}}, {"4097 steps", "limit"});
}

TEST(JsonProgram, RefusesUnknownVocabulary) {
  json c = {{"op", "clone"}, {"inputs", {0}}, {"attrs", {{"memory_format", "channels_first"}}}};
  json j = one_step(rand_json({2}, {1}));
  j["steps"].push_back(c);
  expect_error(j, {"step 1 (clone)", "memory_format", "channels_first"});
  json s = {{"op", "add_scalar"}, {"inputs", {0}}, {"attrs", {{"scalar", {{"kind", "complex"}, {"value", 1}}}}}};
  j["steps"][1] = s;
  expect_error(j, {"step 1 (add_scalar)", "kind", "complex"});
  j["steps"][1]["attrs"]["scalar"] = {{"kind", "int"}, {"value", 2.5}};
  expect_error(j, {"scalar", "integer"});
  j["steps"][1]["attrs"]["scalar"] = {{"kind", "float"}, {"value", "lots"}};
  expect_error(j, {"scalar", "value"});
}

TEST(JsonProgram, HostileNestingIsAnErrorNotACrash) {
  // Built from text, as a hostile file would be: nothing here may recurse once per level.
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  expect_error(json::parse(R"({"schema_version": 1, "steps": [)" + deep + "]}"), {"step 0", "object"});
  std::string step = rand_json({2}, {1}).dump();
  step.replace(step.find("[2]"), 3, deep);
  expect_error(json::parse(R"({"schema_version": 1, "steps": [)" + step + "]}"), {"step 0 (rand)", "sizes"});
}


Trace sample_trace() {
  Trace t;
  t.backend = "impl";
  StepObs ok;
  TensorObs o;
  o.value = 0;
  o.sizes = {2, 1};
  o.strides = {1, 7};
  o.offset = 3;
  o.dtype = DType::Float64;
  o.device = "cpu";
  o.requires_grad = true;
  o.is_leaf = false;
  o.grad_fn = "AddBackward0";
  o.version = 4;
  o.alias_of = 0;
  o.contiguous = true;
  o.channels_last = true;
  o.non_overlapping_dense = true;
  o.values = {1.5, std::numeric_limits<double>::infinity()};
  o.grad = GradObs{{2, 1}, {1, 1}, DType::Float64, {0.25, -0.0}};
  ok.observed.push_back(o);
  o.value = 1;
  o.values_defined = false;
  o.values.clear();
  o.grad.reset();
  ok.observed.push_back(o);
  t.steps.push_back(ok);
  StepObs err;
  err.status = StepObs::Status::Error;
  err.category = ErrorCategory::VersionMismatch;
  err.message = "one of the variables needed for gradient computation has been modified by an inplace operation";
  err.exception = judge::ExceptionType::Error;
  t.steps.push_back(err);
  StepObs skipped;
  skipped.status = StepObs::Status::Skipped;
  t.steps.push_back(skipped);
  return t;
}

TEST(JsonTrace, RoundTripsEveryField) {
  Trace t = sample_trace();
  EXPECT_EQ(trace_from_json(json::parse(to_json(t).dump())), t);
}

TEST(JsonTrace, NanValuesRoundTrip) {
  Trace t = sample_trace();
  t.steps[0].observed[0].values = {std::nan("")};
  Trace back = trace_from_json(json::parse(to_json(t).dump()));
  ASSERT_EQ(back.steps[0].observed[0].values.size(), 1u);
  EXPECT_TRUE(std::isnan(back.steps[0].observed[0].values[0]));
}

TEST(JsonTrace, RefusesBrokenTraces) {
  json j = to_json(sample_trace());
  j["steps"][1]["status"] = "exploded";
  EXPECT_THROW(trace_from_json(j), JsonError);
  j = to_json(sample_trace());
  j["steps"][1]["category"] = "weird";
  EXPECT_THROW(trace_from_json(j), JsonError);
  j = to_json(sample_trace());
  j["steps"][1]["exception"] = "c10::Oops";
  EXPECT_THROW(trace_from_json(j), JsonError);
  // A trace of schema version 9 names no class: its errors read as unnamed, which compare never judges.
  j = to_json(sample_trace());
  j["steps"][1].erase("exception");
  EXPECT_FALSE(trace_from_json(j).steps[1].exception);
  j = to_json(sample_trace());
  j["steps"][0]["observed"][0].erase("version");
  try {
    trace_from_json(j);
    ADD_FAILURE();
  } catch (const JsonError& e) {
    EXPECT_NE(std::string(e.what()).find("version"), std::string::npos);
  }
}

TEST(JsonDivergence, RoundTrips) {
  Divergence d{3, 2, DivergenceKind::StridesSize1, "[1, 1]", "[3, 1]", Divergence::Severity::Minor, std::nullopt,
               ErrorCategory::Shape};
  json j = to_json(d);
  EXPECT_EQ(j["severity"], "minor");
  EXPECT_EQ(divergence_from_json(json::parse(j.dump())), d);
  d.severity = Divergence::Severity::Major;
  d.impl_category = ErrorCategory::Crash;
  EXPECT_EQ(divergence_from_json(to_json(d)), d);
  j["severity"] = "catastrophic";
  EXPECT_THROW(divergence_from_json(j), JsonError);
  j["severity"] = "minor";
  j["kind"] = "strides_size_one";  // kinds are read as DivergenceKind: an unknown one is refused
  EXPECT_THROW(divergence_from_json(j), JsonError);
}

// A crash names the signal that ended it; only a crash has one, named as <signal.h> does.
TEST(JsonDivergence, ACrashKeepsItsSignal) {
  Divergence d{1, -1, DivergenceKind::Crash, "killed by signal 6 (Aborted)", "not run", Divergence::Severity::Major,
               ErrorCategory::Crash, std::nullopt, "SIGABRT"};
  json j = to_json(d);
  EXPECT_EQ(j["signal"], "SIGABRT");
  EXPECT_EQ(divergence_from_json(json::parse(j.dump())), d);
  d.signal.clear();
  EXPECT_FALSE(to_json(d).contains("signal"));
  j["signal"] = "abort";
  EXPECT_THROW(divergence_from_json(j), JsonError);
  j["signal"] = "SIGABRT";
  j["kind"] = "timeout";
  EXPECT_THROW(divergence_from_json(j), JsonError);
}

}  // namespace
}  // namespace parity::program
