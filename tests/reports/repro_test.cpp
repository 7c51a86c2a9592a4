// Repro printers: structural checks (no golden files): every op prints with every placeholder replaced, the
// no_grad and raised-step wrappers appear, literals are spelled the way each language needs.
#include <gtest/gtest.h>

#include <limits>
#include <regex>

#include "program/content.h"
#include "judge/compare.h"
#include "reports/repro.h"

namespace parity::reports {

using judge::ErrorCategory;
using judge::StepObs;
using judge::Trace;
using program::Device;
using program::DType;
using program::MemoryFormat;
using program::op_table;
using program::OpId;
using program::OpSpec;
using program::Program;
using program::Scalar;
using program::seeded_content;
using program::Step;
using program::storage_extent;

namespace {

Step rand_step(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides, std::uint64_t seed = 3) {
  Step s;
  s.op = OpId::Rand;
  s.attrs.sizes = std::move(sizes);
  s.attrs.strides = std::move(strides);
  s.attrs.seed = seed;
  return s;
}

Step step(OpId op, std::vector<int> inputs) {
  Step s;
  s.op = op;
  s.inputs = std::move(inputs);
  return s;
}

bool contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

// A '{name}' left behind, or an operand placeholder '{0}'/'{1}'.
std::optional<std::string> leftover(const std::string& text) {
  static const std::regex placeholder(R"(\{([a-z_][a-z_0-9]*|[0-9])\})");
  std::smatch m;
  if (std::regex_search(text, m, placeholder)) return m.str();
  return std::nullopt;
}

TEST(Repro, EveryOpPrintsWithoutPlaceholders) {
  for (const OpSpec& op : op_table()) {
    Program p;
    p.steps.push_back(rand_step({2, 3, 4, 5}, {60, 20, 5, 1}));
    p.steps.push_back(rand_step({2, 3, 4, 5}, {60, 20, 5, 1}, 4));
    Step s = step(op.id, {});
    for (int i = 0; i < op.arity; ++i) s.inputs.push_back(i);
    s.attrs.sizes = {2, 3, 4, 5};
    s.attrs.strides = {60, 20, 5, 1};
    s.attrs.dims = {0, 1};
    s.attrs.scalar = {Scalar::Kind::Float, 2.0};
    s.attrs.elements.assign(120, Scalar{Scalar::Kind::Int, 1});  // a literal list of those sizes
    p.steps.push_back(s);
    // The steps only: the show() helpers' own braces (Python f-strings) are not placeholders.
    std::string cpp = cpp_repro(p), py = python_repro(p);
    cpp = cpp.substr(cpp.find("int main() {"));
    py = py.substr(py.find("# step 0"));
    EXPECT_EQ(leftover(cpp), std::nullopt) << op.name << ":\n" << cpp;
    EXPECT_EQ(leftover(py), std::nullopt) << op.name << ":\n" << py;
    // The step's own expression mentions its operands by name.
    if (op.arity >= 1) {
      EXPECT_TRUE(contains(cpp, "v0")) << op.name;
      EXPECT_TRUE(contains(py, "v0")) << op.name;
    }
    if (op.arity == 2) {
      EXPECT_TRUE(contains(cpp, "v1")) << op.name;
    }
  }
}

TEST(Repro, CompletePrograms) {
  Program p;
  p.steps.push_back(rand_step({2, 3}, {3, 1}));
  p.steps.push_back(step(OpId::Sum, {0}));
  std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_TRUE(contains(cpp, "#include <torch/torch.h>"));
  EXPECT_TRUE(contains(cpp, "int main() {"));
  EXPECT_TRUE(contains(cpp, "return 0;\n}"));
  EXPECT_TRUE(contains(cpp, "torch::Tensor v0 = torch::tensor(std::vector<double>{"));
  EXPECT_TRUE(contains(cpp, "torch::Tensor v1 = v0.sum();"));
  EXPECT_TRUE(contains(cpp, "show(\"v0\", v0);"));
  EXPECT_TRUE(contains(cpp, "show(\"v1\", v1);"));
  EXPECT_TRUE(contains(py, "import torch\n"));
  EXPECT_TRUE(contains(py, "v1 = v0.sum()\n"));
  EXPECT_TRUE(contains(py, "show(\"v1\", v1)"));
  // The helper prints what a trace holds.
  for (const char* what : {"sizes", "strides", "requires_grad", "is_leaf", "retains_grad", "grad_fn", "_version", "grad"}) {
    EXPECT_TRUE(contains(cpp, what)) << what;
    EXPECT_TRUE(contains(py, what)) << what;
  }
}

// The deepcopy recipe (oracle/deepcopy_recipe.inc) is printed only for programs that deep-copy.
TEST(Repro, DeepcopyRecipeOnlyWhereUsed) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  EXPECT_FALSE(contains(cpp_repro(p), "parity_deepcopy"));
  p.steps.push_back(step(OpId::Deepcopy, {0}));
  const std::string cpp = cpp_repro(p);
  EXPECT_TRUE(contains(cpp, "torch::Tensor parity_deepcopy(const torch::Tensor& x, DeepcopyMemo& memo) {"));
  EXPECT_TRUE(contains(cpp, "parity_deepcopy(v0, memo0)"));
}

// A literal list is nested as Python writes it, and passed flat to the C++ recipe, printed only where used.
TEST(Repro, LiteralListIsNestedInPythonAndFlatInCpp) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  EXPECT_FALSE(contains(cpp_repro(p), "parity_tensor"));
  Step t = step(OpId::Tensor, {});
  t.attrs.sizes = {2, 2};
  t.attrs.elements = {{Scalar::Kind::Int, 1}, {Scalar::Kind::Float, -0.5}, {Scalar::Kind::Bool, 1},
                      {Scalar::Kind::Float, std::numeric_limits<double>::infinity()}};
  p.steps.push_back(t);
  const std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_TRUE(contains(cpp, "torch::Tensor parity_tensor(const std::vector<c10::Scalar>& elements")) << cpp;
  EXPECT_TRUE(contains(cpp, "parity_tensor(std::vector<c10::Scalar>{1, -0.5, true, "
                            "std::numeric_limits<double>::infinity()}, {2, 2}, torch::kFloat32, torch::kCPU, false)"))
      << cpp;
  EXPECT_TRUE(contains(py, "torch.tensor([[1, -0.5], [True, float('inf')]], dtype=torch.float32")) << py;
  p.steps[1].attrs.sizes = {};
  p.steps[1].attrs.elements.resize(1);
  EXPECT_TRUE(contains(python_repro(p), "torch.tensor(1, dtype=")) << python_repro(p);
}

TEST(Repro, RandDataIsTheSeededContent) {
  Program p;
  p.steps.push_back(rand_step({2, 2}, {1, 2}, 11));
  p.steps[0].attrs.offset = 1;
  auto values = seeded_content(11, storage_extent({2, 2}, {1, 2}, 1), DType::Float32);
  ASSERT_EQ(values.size(), 5u);
  std::string cpp_list = "{", py_list = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%g", i ? ", " : "", values[i]);
    std::string item = buf;
    if (item.find('.') == std::string::npos) item += ".0";
    cpp_list += item;
    py_list += item;
  }
  cpp_list += "}";
  py_list += "]";
  EXPECT_TRUE(contains(cpp_repro(p), "std::vector<double>" + cpp_list)) << cpp_repro(p) << "\nwant " << cpp_list;
  EXPECT_TRUE(contains(python_repro(p), "torch.tensor(" + py_list)) << python_repro(p);
  EXPECT_TRUE(contains(cpp_repro(p), ".as_strided({2, 2}, {1, 2}, 1)"));
  EXPECT_TRUE(contains(python_repro(p), ".as_strided([2, 2], [1, 2], 1)"));
}

TEST(Repro, NoGradBlock) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  Step s = step(OpId::MulScalar, {0});
  s.grad_enabled = false;
  s.attrs.scalar = {Scalar::Kind::Float, 2.0};
  p.steps.push_back(s);
  std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_TRUE(contains(cpp, "torch::Tensor v1;\n  { torch::NoGradGuard no_grad; v1 = v0.mul(2.0); }")) << cpp;
  EXPECT_TRUE(contains(py, "with torch.no_grad():\n    v1 = v0.mul(2.0)\n")) << py;
}

TEST(Repro, RaisedAndSkippedStepsFollowTheOracle) {
  Program p;
  p.steps.push_back(rand_step({2, 3}, {3, 1}));
  Step t = step(OpId::Transpose, {0});
  t.attrs.dim = 5;
  t.grad_enabled = false;
  p.steps.push_back(t);
  p.steps.push_back(step(OpId::Neg, {1}));
  Trace oracle;
  oracle.backend = "libtorch";
  oracle.steps.resize(3);
  oracle.steps[1].status = StepObs::Status::Error;
  oracle.steps[1].category = ErrorCategory::IndexRange;
  oracle.steps[1].message = "Dimension out of range (expected to be in range of [-2, 1], but got 5)\\\nmore";
  oracle.steps[2].status = StepObs::Status::Skipped;

  std::string cpp = cpp_repro(p, {.judge = &oracle}), py = python_repro(p, {.judge = &oracle});
  EXPECT_TRUE(contains(cpp, "torch::Tensor v1;\n  try {\n    torch::NoGradGuard no_grad; v1 = v0.transpose(5, 0);"))
      << cpp;
  EXPECT_TRUE(contains(cpp, "\"step 1 raised: \" << e.what_without_backtrace()"));
  EXPECT_TRUE(contains(py, "try:\n    with torch.no_grad():\n        v1 = v0.transpose(5, 0)\n"));
  EXPECT_TRUE(contains(py, "except (RuntimeError, IndexError"));  // the oracle named no class: any PyTorch raises
  EXPECT_TRUE(contains(py, "print(f\"step 1 raised {type(e).__name__}: {e}\")"));
  // Named, the class is what the repro catches, as Python sees it: another one stops it.
  oracle.steps[1].exception = judge::ExceptionType::IndexError;
  EXPECT_TRUE(contains(python_repro(p, {.judge = &oracle}), "except IndexError as e:\n"));
  oracle.steps[1].exception = judge::ExceptionType::RuntimeError;
  EXPECT_TRUE(contains(python_repro(p, {.judge = &oracle}), "except RuntimeError as e:\n"));
  // The message is quoted in a one-line comment that no backslash can continue.
  EXPECT_TRUE(contains(cpp, "// raised on LibTorch: Dimension out of range"));
  EXPECT_FALSE(std::regex_search(cpp, std::regex(R"(//[^\n]*\\\n)")));
  // The skipped step is a comment: v2 is never assigned nor shown.
  EXPECT_TRUE(contains(cpp, "// skipped on LibTorch"));
  EXPECT_FALSE(contains(cpp, "v2 ="));
  EXPECT_FALSE(contains(cpp, "show(\"v2\""));
  EXPECT_TRUE(contains(py, "# skipped on LibTorch"));
  EXPECT_FALSE(contains(py, "v2 ="));
  // The raised step's value is shown as undefined, so it is declared.
  EXPECT_TRUE(contains(cpp, "show(\"v1\", v1);"));
  EXPECT_TRUE(contains(py, "v1 = None\n"));
}

TEST(Repro, StepsWithoutAValue) {
  Program p;
  p.steps.push_back(rand_step({1}, {1}));
  p.steps[0].attrs.requires_grad = true;
  p.steps.push_back(step(OpId::Sum, {0}));
  Step b = step(OpId::Backward, {1});
  b.attrs.retain_graph = true;
  p.steps.push_back(b);
  std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_TRUE(contains(cpp, "  v1.backward(torch::Tensor(), true, false);\n")) << cpp;
  EXPECT_FALSE(contains(cpp, "v2"));
  EXPECT_TRUE(contains(py, "\nv1.backward(retain_graph=True, create_graph=False)\n")) << py;
  EXPECT_TRUE(contains(cpp, ".requires_grad_(true)"));
  EXPECT_TRUE(contains(py, ".requires_grad_(True)"));
}

// Devices print as LibTorch and PyTorch spell them; a _like factory's None keeps its operand's device.
TEST(Repro, Devices) {
  Program p;
  p.steps.push_back(rand_step({2}, {1}));
  Step z = step(OpId::Zeros, {});
  z.attrs.sizes = {2};
  z.attrs.device = Device::CUDA;
  p.steps.push_back(z);
  p.steps.push_back(step(OpId::OnesLike, {0}));
  Step e = step(OpId::EmptyLike, {1});
  e.attrs.like_device = Device::CPU;
  p.steps.push_back(e);
  Step t = step(OpId::ToDevice, {1});
  p.steps.push_back(t);
  const std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_NE(cpp.find("torch::kFloat64).to(torch::kCPU, torch::kFloat32)"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("torch::zeros({2}, torch::dtype(torch::kFloat32).device(torch::kCUDA)"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("torch::ones_like(v0, torch::TensorOptions().device(c10::optional<torch::Device>())"),
            std::string::npos) << cpp;
  EXPECT_NE(cpp.find("torch::TensorOptions().device(c10::optional<torch::Device>(torch::kCPU))"), std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("v1.to(torch::kCPU, v1.scalar_type(), false, false)"), std::string::npos) << cpp;
  EXPECT_NE(py.find("torch.zeros([2], dtype=torch.float32, device='cuda'"), std::string::npos) << py;
  EXPECT_NE(py.find("torch.ones_like(v0, device=None"), std::string::npos) << py;
  EXPECT_NE(py.find("torch.empty_like(v1, device='cpu'"), std::string::npos) << py;
  EXPECT_NE(py.find("v1.to('cpu', copy=False)"), std::string::npos) << py;
}

TEST(Repro, Literals) {
  auto printed = [](Scalar s, bool cpp) {
    Program p;
    p.steps.push_back(rand_step({2}, {1}));
    Step a = step(OpId::AddScalar, {0});
    a.attrs.scalar = s;
    p.steps.push_back(a);
    std::string text = cpp ? cpp_repro(p) : python_repro(p);
    auto at = text.find("v0.add(");
    return text.substr(at + 7, text.find(')', at) - at - 7);
  };
  EXPECT_EQ(printed({Scalar::Kind::Int, 3}, true), "3");
  EXPECT_EQ(printed({Scalar::Kind::Int, -4}, false), "-4");
  EXPECT_EQ(printed({Scalar::Kind::Float, 2}, true), "2.0");
  EXPECT_EQ(printed({Scalar::Kind::Float, -0.25}, false), "-0.25");
  EXPECT_EQ(printed({Scalar::Kind::Float, 1e300}, false), "1e+300");
  EXPECT_EQ(printed({Scalar::Kind::Bool, 1}, true), "true");
  EXPECT_EQ(printed({Scalar::Kind::Bool, 1}, false), "True");
  EXPECT_EQ(printed({Scalar::Kind::Float, std::numeric_limits<double>::infinity()}, false), "float('inf'");

  Program p;
  p.steps.push_back(rand_step({1, 2, 1, 1}, {2, 1, 1, 1}));
  p.steps[0].attrs.dtype = DType::Int64;
  Step c = step(OpId::Clone, {0});
  c.attrs.memory_format = MemoryFormat::ChannelsLast;
  p.steps.push_back(c);
  Step z = step(OpId::Zeros, {});
  z.attrs.sizes = {};
  z.attrs.dtype = DType::Bool;
  p.steps.push_back(z);
  Step v = step(OpId::View, {2});
  v.attrs.sizes = {};
  p.steps.push_back(v);
  std::string cpp = cpp_repro(p), py = python_repro(p);
  EXPECT_TRUE(contains(cpp, ".to(torch::kCPU, torch::kInt64)"));
  EXPECT_TRUE(contains(py, ".to('cpu', torch.int64)"));
  EXPECT_TRUE(contains(cpp, "v0.clone(torch::MemoryFormat::ChannelsLast)"));
  EXPECT_TRUE(contains(py, "v0.clone(memory_format=torch.channels_last)"));
  // Typed in C++: a bare {} would make view() reinterpret the dtype instead (view(ScalarType)).
  EXPECT_TRUE(contains(cpp, "torch::zeros(std::vector<int64_t>{}, torch::dtype(torch::kBool).device(torch::kCPU).requires_grad(false))"));
  EXPECT_TRUE(contains(py, "torch.zeros([], dtype=torch.bool, device='cpu', requires_grad=False)"));
  EXPECT_TRUE(contains(cpp, "v2.view(std::vector<int64_t>{})"));
  EXPECT_TRUE(contains(py, "v2.view([])"));
}

// A finding's sides: impl made a tensor of its own where LibTorch returned its input (an identity divergence).
struct IdentityFinding {
  Program program;
  Trace library, judge;
  judge::Divergence point;
};

IdentityFinding identity_finding() {
  IdentityFinding f;
  f.program.steps.push_back(rand_step({2}, {1}));
  f.program.steps.push_back(step(OpId::Mul_, {0, 0}));
  for (Trace* t : {&f.library, &f.judge}) {
    t->steps.resize(2);
    judge::TensorObs o;
    o.value = 1;
    o.sizes = {2};
    o.strides = {1};
    o.alias_of = 0;
    o.same_as = t == &f.judge ? 0 : 1;
    t->steps[1].observed.push_back(o);
  }
  f.point = *judge::compare(f.library, f.judge);
  return f;
}

TEST(ReproCheck, HoldsTheLiveObservationAgainstTheLibrarysSide) {
  const IdentityFinding f = identity_finding();
  ASSERT_EQ(f.point.kind, judge::DivergenceKind::Identity);
  const ReproSides sides{.judge = &f.judge, .library = &f.library, .point = f.point, .now = f.point,
                         .judge_name = "LibTorch 9.9.9", .found_by = "abc1234"};
  const auto c = repro_check(sides);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->live, ReproCheck::Live::Tensor);
  // The texts compare() rendered: what the repro's observe() renders too.
  EXPECT_EQ(c->library, f.point.impl);
  EXPECT_EQ(c->judge, f.point.oracle);
  const std::string py = python_repro(f.program, sides), cpp = cpp_repro(f.program, sides);
  EXPECT_TRUE(contains(py, "check(\"step 1, v1: identity\", observe(\"identity\", 1, {0: v0, 1: v1}), "
                           "\"its own tensor\", \"the same tensor as v0\")")) << py;
  EXPECT_TRUE(contains(cpp, "check(\"step 1, v1: identity\", observe(\"identity\", 1, Values{{0, v0}, {1, v1}}), "
                            "\"its own tensor\", \"the same tensor as v0\");")) << cpp;
  EXPECT_TRUE(contains(py, "\nfinish()\n"));
  EXPECT_TRUE(contains(cpp, "  return finish();\n}"));
  // The title names the judge, the parity that found it and the one that printed it.
  EXPECT_TRUE(py.starts_with("# parity repro (PyTorch), judged by LibTorch 9.9.9, found by parity abc1234, printed "
                             "by parity ")) << py.substr(0, 200);
  // The checked step catches whatever it raises, to observe it.
  EXPECT_TRUE(contains(py, "raised = None\ntry:\n    v1 = v0.mul_(v0)\nexcept Exception as e:\n    raised = e\n"));
}

TEST(ReproCheck, TheLibrarysSideIsItsTraceNowSoAFixedFindingPasses) {
  IdentityFinding f = identity_finding();
  f.library = f.judge;  // replayed on a library that does what LibTorch does
  const auto c = repro_check({.judge = &f.judge, .library = &f.library, .point = f.point});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->library, c->judge);
  EXPECT_EQ(c->library, "the same tensor as v0");
}

TEST(ReproCheck, AKindNoReproObservesHoldsTheRecordedSides) {
  IdentityFinding f = identity_finding();
  f.point.kind = judge::DivergenceKind::Schema;
  f.point.value = -1;
  f.point.impl = "wrote v0";
  f.point.oracle = "conforms to its schema";
  const ReproSides sides{.judge = &f.judge, .library = &f.library, .point = f.point, .now = f.point};
  const auto c = repro_check(sides);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->live, ReproCheck::Live::Recorded);
  EXPECT_EQ(c->library, "wrote v0");
  EXPECT_FALSE(c->why_recorded.empty());
  EXPECT_TRUE(contains(python_repro(f.program, sides), "check_recorded(\"step 1: schema\", \"wrote v0\", "
                                                       "\"conforms to its schema\", "));
  // Replayed without the divergence, the library's side is the judge's.
  EXPECT_EQ(repro_check({.judge = &f.judge, .library = &f.library, .point = f.point})->library,
            "conforms to its schema");
}

TEST(ReproCheck, ALibraryThatDiedIsNamedByHowItDied) {
  IdentityFinding f = identity_finding();
  judge::Divergence crash{1, -1, judge::DivergenceKind::Crash, "crashed", "ok"};
  crash.signal = "SIGSEGV";
  const auto c = repro_check({.judge = &f.judge, .library = nullptr, .point = crash, .now = crash});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->live, ReproCheck::Live::Status);
  EXPECT_EQ(c->library, "crashed (SIGSEGV)");
  EXPECT_EQ(c->judge, "ok");
}

TEST(ReproCheck, ValuesAreHeldElementByElementWithTheDtypesTolerance) {
  IdentityFinding f = identity_finding();
  f.library.steps[1].observed[0].same_as = 0;
  f.library.steps[1].observed[0].values = {1.0, 5.0};
  f.judge.steps[1].observed[0].values = {1.0, 4.0};
  const judge::Divergence d = *judge::compare(f.library, f.judge);
  ASSERT_EQ(d.kind, judge::DivergenceKind::Values);
  const ReproSides sides{.judge = &f.judge, .library = &f.library, .point = d, .now = d};
  const auto c = repro_check(sides);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->live, ReproCheck::Live::Element);
  EXPECT_EQ(c->library_values, (std::vector<double>{1.0, 5.0}));
  EXPECT_EQ(c->tolerance.rtol, judge::tolerance(DType::Float32).rtol);
  EXPECT_TRUE(contains(python_repro(f.program, sides), "check_elements(\"step 1, v1: values\", v1, [1.0, 5.0], "));
}

TEST(ReproCheck, AnUninitialisedValueIsShownWithoutItsElements) {
  Program p;
  Step e = step(OpId::Empty, {});
  e.attrs.sizes = {3};
  p.steps.push_back(e);
  Trace judge;
  judge.steps.resize(1);
  judge::TensorObs o;
  o.value = 0;
  o.values_defined = false;
  judge.steps[0].observed.push_back(o);
  EXPECT_TRUE(contains(cpp_repro(p, {.judge = &judge}), "show(\"v0\", v0, false);"));
  EXPECT_TRUE(contains(python_repro(p, {.judge = &judge}), "show(\"v0\", v0, False)"));
  EXPECT_TRUE(contains(python_repro(p), "show(\"v0\", v0)"));  // no trace: nothing says it is unread
}

}  // namespace
}  // namespace parity::reports
