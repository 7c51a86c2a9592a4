// The impl-cpu oracle (`parity fuzz --device cuda --oracle impl-cpu`): impl with its cuda tensors in host memory.
// It needs no GPU, so it runs here: what it observes must be a cuda run's (devices, the device rules, the kernel
// dispatch of cuda) with values the CPU computed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>

#include "engine/case_seed.h"
#include "generators/program_gen.h"
#include "impl_backend/backend.h"
#include "judge/backend.h"
#include "judge/trace_json.h"
#include "oracle/torch_backend.h"
#include "program/json.h"
#include "program/program_builder.h"
#include "reports/jsonl.h"

namespace parity::judge {

using program::Attrs;
using program::Device;
using program::DType;
using program::OpId;
using program::Program;
using program::ProgramBuilder;

namespace {

Attrs on(Device d) {
  Attrs a;
  a.device = d;
  return a;
}

Trace run_on_oracle(const Program& p) {
  auto oracle = impl_backend::make_impl_cpu_oracle();
  return run(*oracle, p);
}

const TensorObs& only(const Trace& t, int step) {
  const StepObs& s = t.steps.at(static_cast<std::size_t>(step));
  EXPECT_EQ(s.status, StepObs::Status::Ok) << "step " << step << ": " << s.message;
  return s.observed.at(0);
}

TEST(ImplCpuOracle, NamesItself) {
  auto oracle = impl_backend::make_impl_cpu_oracle();
  EXPECT_EQ(oracle->name(), "impl-cpu");
  EXPECT_NE(oracle->version().find("parity-impl on the CPU (follows torch "), std::string::npos) << oracle->version();
}

// A cuda program: every cuda value says cuda:0, the values are what the CPU computes, and a gradient comes back
// to its leaf's device.
TEST(ImplCpuOracle, RunsACudaProgramOnTheCpu) {
  ProgramBuilder b;
  int x = b.full({2, 2}, 1.5, /*requires_grad=*/true);
  int xc = b.step(OpId::ToDevice, {x}, on(Device::CUDA));
  Attrs z = on(Device::CUDA);
  z.sizes = {2, 2};
  int ones = b.step(OpId::Ones, {}, z);
  int sum = b.step(OpId::Add, {xc, ones});
  int product = b.step(OpId::Mm, {sum, sum});
  int total = b.step(OpId::Sum, {product});
  int back = b.step(OpId::ToDevice, {total}, on(Device::CPU));
  b.step(OpId::Backward, {total});
  int grad = b.step(OpId::Grad, {x});
  const Trace t = run_on_oracle(b.program());
  for (int v : {xc, ones, sum, product, total}) EXPECT_EQ(only(t, v).device, "cuda:0") << "value " << v;
  EXPECT_EQ(only(t, xc).grad_fn, "ToCopyBackward0");
  EXPECT_EQ(only(t, sum).values, (std::vector<double>{2.5, 2.5, 2.5, 2.5}));
  EXPECT_EQ(only(t, product).values, (std::vector<double>{12.5, 12.5, 12.5, 12.5}));
  EXPECT_EQ(only(t, back).device, "cpu");
  EXPECT_EQ(only(t, back).values, (std::vector<double>{50}));
  // d/dx of sum((x+1) @ (x+1)) over 2x2 ones-filled rows: 4 * 2.5 for every element.
  EXPECT_EQ(only(t, grad).device, "cpu");
  EXPECT_EQ(only(t, grad).values, (std::vector<double>{10, 10, 10, 10}));
}

// The rules are cuda's, where they differ from the CPU's: two devices in one pointwise op, and cuBLAS's products,
// which take no integers (the CPU's do).
TEST(ImplCpuOracle, FollowsCudasRules) {
  ProgramBuilder b;
  int i = b.arange(4, DType::Int64);
  Attrs shape;
  shape.sizes = {2, 2};
  int m = b.step(OpId::View, {i}, shape);
  int mc = b.step(OpId::ToDevice, {m}, on(Device::CUDA));
  int on_cpu = b.step(OpId::Mm, {m, m});
  int on_cuda = b.step(OpId::Mm, {mc, mc});
  int mixed = b.step(OpId::Add, {mc, m});
  const Trace t = run_on_oracle(b.program());
  EXPECT_EQ(only(t, on_cpu).values, (std::vector<double>{2, 3, 6, 11}));
  const StepObs& cuda_mm = t.steps.at(static_cast<std::size_t>(on_cuda));
  EXPECT_EQ(cuda_mm.status, StepObs::Status::Error);
  EXPECT_EQ(cuda_mm.category, ErrorCategory::DType);
  EXPECT_EQ(cuda_mm.message, "\"addmm_cuda\" not implemented for 'Long'");
  const StepObs& two_devices = t.steps.at(static_cast<std::size_t>(mixed));
  EXPECT_EQ(two_devices.status, StepObs::Status::Error);
  EXPECT_EQ(two_devices.category, ErrorCategory::Device);
}

// What a campaign on cuda generates runs on the oracle to its end: no exception escapes a step or an observation,
// and no step trips one of impl's internal assertions (a cuda path the host-backed memory does not serve).
TEST(ImplCpuOracle, GeneratedCudaProgramsRunToTheEnd) {
  generators::GenConfig config;
  config.cuda = true;
  int cuda_steps = 0;
  for (std::uint64_t k = 0; k < 300; ++k) {
    const Program p = engine::generate_case(20261127, k, config).value();
    Trace t;
    ASSERT_NO_THROW(t = run_on_oracle(p)) << "case " << k;
    for (std::size_t s = 0; s < t.steps.size(); ++s) {
      EXPECT_NE(t.steps[s].category, ErrorCategory::InternalAssert) << "case " << k << " step " << s << ": "
                                                                    << t.steps[s].message;
      for (const TensorObs& o : t.steps[s].observed) cuda_steps += o.device == "cuda:0";
    }
  }
  EXPECT_GT(cuda_steps, 300) << "the generator put few values on cuda: the sweep would test little";
}

// masked_fill_ into elements that share memory: the CPU's kernel writes one value into the selected elements only,
// so what it leaves is defined and compared; cuda's writes every element (mask ? value : self), an unselected one
// with what it read, so there it depends on the order of the writes and neither side's values are compared (the
// device run's false alarm with this judge).
TEST(ImplCpuOracle, AMaskedFillIntoSharedMemoryIsUndefinedOnlyOnCuda) {
  for (const Device device : {Device::CPU, Device::CUDA}) {
    ProgramBuilder b;
    int row = b.arange(3, DType::Float32);
    int mask = b.rand({2, 3}, DType::Bool);
    if (device == Device::CUDA) {
      row = b.step(OpId::ToDevice, {row}, on(device));
      mask = b.step(OpId::ToDevice, {mask}, on(device));
    }
    Attrs fill;
    fill.scalar = {program::Scalar::Kind::Float, -1};
    const int put = b.step(OpId::MaskedFill_, {b.with_sizes(OpId::Expand, row, {2, 3}), mask}, fill);
    const Trace t = run_on_oracle(b.program());
    const StepObs& s = t.steps.at(static_cast<std::size_t>(put));
    ASSERT_EQ(s.status, StepObs::Status::Ok) << s.message;
    const auto at_row = std::find_if(s.observed.begin(), s.observed.end(), [&](const TensorObs& o) { return o.value == row; });
    ASSERT_NE(at_row, s.observed.end());
    EXPECT_EQ(at_row->values_defined, device == Device::CPU) << at_row->device;
  }
}

// index_put_ without accumulate, an element named twice: LibTorch leaves which value lands undefined, and its cuda
// kernel writes them in parallel, so there neither side's values are compared; the CPU's serial kernel is compared,
// as is an accumulating write or one through distinct indices on cuda.
TEST(ImplCpuOracle, AnIndexPutThroughARepeatedIndexIsUndefinedOnlyOnCuda) {
  struct Case {
    Device device;
    bool repeated, accumulate, defined;
  };
  for (const Case c : {Case{Device::CPU, true, false, true}, Case{Device::CUDA, true, false, false},
                       Case{Device::CUDA, true, true, true}, Case{Device::CUDA, false, false, true}}) {
    ProgramBuilder b;
    int self = b.rand({3}, DType::Float32);
    int index = c.repeated ? b.full({2}, -1.0, false, DType::Int64) : b.arange(2, DType::Int64);
    int values = b.rand({2}, DType::Float32, false, 9);
    if (c.device == Device::CUDA) {
      self = b.step(OpId::ToDevice, {self}, on(c.device));
      index = b.step(OpId::ToDevice, {index}, on(c.device));
      values = b.step(OpId::ToDevice, {values}, on(c.device));
    }
    Attrs a;
    a.accumulate = c.accumulate;
    const int put = b.step(OpId::IndexPut_, {self, index, values}, a);
    const Trace t = run_on_oracle(b.program());
    const StepObs& s = t.steps.at(static_cast<std::size_t>(put));
    ASSERT_EQ(s.status, StepObs::Status::Ok) << s.message;
    const auto at_self = std::find_if(s.observed.begin(), s.observed.end(), [&](const TensorObs& o) { return o.value == self; });
    ASSERT_NE(at_self, s.observed.end());
    EXPECT_EQ(at_self->values_defined, c.defined) << at_self->device << " repeated " << c.repeated << " accumulate "
                                                  << c.accumulate;
  }
}

// Values as the judge holds them: NaN equals NaN whatever its sign.
std::vector<std::string> rendered(const std::vector<double>& values) {
  std::vector<std::string> out;
  for (double v : values) out.push_back(std::isnan(v) ? "nan" : ::testing::PrintToString(v));
  return out;
}

// The device run of issue 30 (an H200, judged by LibTorch-CUDA 2.11) found programs where impl's cuda and
// LibTorch-CUDA disagreed; data/ keeps each program, LibTorch-CUDA's trace as that run recorded it, and where the
// two differed. Following that release, the impl-cpu oracle (impl's cuda logic on host memory) must now give
// LibTorch-CUDA's outcome there: its status, category and message, or its values. Only there: the records come
// from an older parity, whose traces lack facets added since (a gradient's grad_alias_of, the values of a tensor
// whose elements overlap).
TEST(ImplCpuOracle, AgreesWithLibTorchCudaWhereTheDeviceRunFoundItDidNot) {
  const reports::JsonlContents findings = reports::read_jsonl(
      std::filesystem::path(PARITY_SOURCE_DIR) / "tests/impl_backend/data/libtorch_cuda_2.11_findings.jsonl");
  ASSERT_EQ(findings.records.size(), 8u);
  for (const nlohmann::json& r : findings.records) {
    const std::string finding = r.at("signature").get<std::string>();
    const auto release = impl::TorchVersion::parse(r.at("libtorch_version").get<std::string>());
    ASSERT_TRUE(release) << finding;
    const Trace recorded = trace_from_json(r.at("oracle_trace"));
    const Trace ours = run(*impl_backend::make_impl_cpu_oracle(*release), program::program_from_json(r.at("program")));
    const nlohmann::json& d = r.at("divergence");
    const auto step = d.at("step").get<std::size_t>();
    ASSERT_LT(step, ours.steps.size()) << finding;
    const StepObs &a = ours.steps[step], &b = recorded.steps.at(step);
    EXPECT_EQ(a.status, b.status) << finding << ": " << a.message;
    EXPECT_EQ(a.category, b.category) << finding;
    EXPECT_EQ(a.message, b.message) << finding;
    const std::string kind = d.at("kind").get<std::string>();
    if (kind != "values" && kind != "grad_values") continue;
    const int value = d.at("value").get<int>();  // the value id the observation is of
    auto of_value = [&](const StepObs& s) {
      return std::find_if(s.observed.begin(), s.observed.end(), [&](const TensorObs& o) { return o.value == value; });
    };
    ASSERT_NE(of_value(a), a.observed.end()) << finding;
    ASSERT_NE(of_value(b), b.observed.end()) << finding;
    const TensorObs &x = *of_value(a), &y = *of_value(b);
    if (kind == "values") {
      EXPECT_EQ(rendered(x.values), rendered(y.values)) << finding;
    } else {
      ASSERT_TRUE(x.grad && y.grad) << finding;
      EXPECT_EQ(rendered(x.grad->values), rendered(y.grad->values)) << finding;
    }
  }
}

}  // namespace
}  // namespace parity::judge
