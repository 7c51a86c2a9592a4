#include "reports/repro.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "judge/value_summary.h"
#include "program/attr_spec.h"
#include "program/content.h"
#include "program/internal_assert.h"
#include "program/op_template.h"
#include "reports/build_info.h"
#include "reports/recipe_text.h"
#include "reports/repro_check.h"
#include "reports/repro_literal.h"

namespace parity::reports {

using judge::kFullValuesUpTo;
using judge::StepObs;
using judge::Trace;
using program::Attr;
using program::attr_spec;
using program::Attrs;
using program::AttrSpec;
using program::AttrType;
using program::Device;
using program::DType;
using program::MemoryFormat;
using program::OpId;
using program::OpSpec;
using program::Program;
using program::Scalar;
using program::seeded_content;
using program::spec;
using program::Step;
using program::storage_extent;

namespace {

using Lang = ReproLang;

std::string scalar_literal(const Scalar& s, Lang lang) {
  switch (s.kind) {
    case Scalar::Kind::Int: return std::to_string(static_cast<std::int64_t>(s.value));
    case Scalar::Kind::Bool: return bool_literal(s.value != 0.0, lang);
    case Scalar::Kind::Float: return float_literal(s.value, lang);
  }
  PARITY_HARNESS_UNREACHABLE("no case for this enum value");
}

// A literal list's elements as Python nests them by `sizes` (a bare number for 0-dim), and as parity_tensor
// takes them in C++: flat, typed, each a c10::Scalar of its own kind.
std::string elements_literal(const std::vector<Scalar>& elements, const std::vector<std::int64_t>& sizes, Lang lang) {
  if (lang == Lang::Cpp)
    return "std::vector<c10::Scalar>" + list_literal(elements, lang, [lang](const Scalar& e) { return scalar_literal(e, lang); });
  std::size_t next = 0;
  // The JSON reader holds a literal list to its sizes (program/json.cpp); one built otherwise must be as well.
  PARITY_HARNESS_ASSERT(static_cast<std::int64_t>(elements.size()) ==
                            std::accumulate(sizes.begin(), sizes.end(), std::int64_t{1}, std::multiplies<>()),
                        "a literal list of " + std::to_string(elements.size()) + " elements for sizes " +
                            program::render_ints(sizes));
  auto nested = [&](auto&& self, std::size_t dim) -> std::string {
    if (dim == sizes.size()) return scalar_literal(elements.at(next++), lang);
    std::string s = "[";
    for (std::int64_t i = 0; i < sizes[dim]; ++i) s += (i ? ", " : "") + self(self, dim + 1);
    return s + "]";
  };
  return nested(nested, 0);
}

std::string dtype_literal(DType d, Lang lang) {
  std::string_view cpp, py;
  switch (d) {
    case DType::Float32: cpp = "torch::kFloat32", py = "torch.float32"; break;
    case DType::Float64: cpp = "torch::kFloat64", py = "torch.float64"; break;
    case DType::Int64: cpp = "torch::kInt64", py = "torch.int64"; break;
    case DType::Int32: cpp = "torch::kInt32", py = "torch.int32"; break;
    case DType::Float16: cpp = "torch::kFloat16", py = "torch.float16"; break;
    case DType::BFloat16: cpp = "torch::kBFloat16", py = "torch.bfloat16"; break;
    case DType::Bool: cpp = "torch::kBool", py = "torch.bool"; break;
  }
  return std::string(lang == Lang::Cpp ? cpp : py);
}

std::string memory_format_literal(MemoryFormat m, Lang lang) {
  std::string_view cpp, py;
  switch (m) {
    case MemoryFormat::Contiguous: cpp = "torch::MemoryFormat::Contiguous", py = "torch.contiguous_format"; break;
    case MemoryFormat::ChannelsLast: cpp = "torch::MemoryFormat::ChannelsLast", py = "torch.channels_last"; break;
    case MemoryFormat::ChannelsLast3d: cpp = "torch::MemoryFormat::ChannelsLast3d", py = "torch.channels_last_3d"; break;
    case MemoryFormat::Preserve: cpp = "torch::MemoryFormat::Preserve", py = "torch.preserve_format"; break;
  }
  return std::string(lang == Lang::Cpp ? cpp : py);
}

std::string device_literal(Device d, Lang lang) {
  std::string_view cpp, py;
  switch (d) {
    case Device::CPU: cpp = "torch::kCPU", py = "'cpu'"; break;
    case Device::CUDA: cpp = "torch::kCUDA", py = "'cuda'"; break;
  }
  return std::string(lang == Lang::Cpp ? cpp : py);
}

std::string value_name(int id) { return "v" + std::to_string(id); }

// The deepcopy memo a step names: one variable per copy.deepcopy call of the program (deepcopy_memos).
std::string memo_name(std::int64_t memo) { return "memo" + std::to_string(memo); }

std::string attribute_literal(const AttrSpec& as, const Attrs& a, Lang lang) {
  switch (as.type) {
    // An empty braced list picks Tensor::view(ScalarType) in LibTorch (ScalarType{} is Byte): type it.
    case AttrType::Shape:
      return (lang == Lang::Cpp && (a.*as.ints).empty() ? "std::vector<int64_t>" : "") + int_list(a.*as.ints, lang);
    // A bare braced list is ambiguous for sum/mean in LibTorch (IntArrayRef vs DimnameList overloads).
    case AttrType::IntList: return (lang == Lang::Cpp ? "std::vector<int64_t>" : "") + int_list(a.*as.ints, lang);
    case AttrType::Int:
    case AttrType::Count: return std::to_string(a.*as.int64);
    case AttrType::Memo: return memo_name(a.*as.int64);
    case AttrType::Bool: return bool_literal(a.*as.flag, lang);
    case AttrType::Scalar: return scalar_literal(a.scalar, lang);
    case AttrType::OptionalScalar: {
      const auto& bound = a.*as.bound;
      // A typed optional in C++: clamp(nullopt, nullopt) and clamp(int, nullopt) are ambiguous overloads.
      if (lang == Lang::Python) return bound ? scalar_literal(*bound, lang) : "None";
      return "c10::optional<c10::Scalar>(" + (bound ? scalar_literal(*bound, lang) : std::string()) + ")";
    }
    case AttrType::DType: return dtype_literal(a.dtype, lang);
    case AttrType::MemoryFormat: return memory_format_literal(a.memory_format, lang);
    case AttrType::Seed: return std::to_string(a.seed);
    case AttrType::Device: return device_literal(a.device, lang);
    // TensorOptions::device takes an optional: None keeps the operand's device, as Python's device=None.
    case AttrType::OptionalDevice:
      if (lang == Lang::Python) return a.like_device ? device_literal(*a.like_device, lang) : "None";
      return "c10::optional<torch::Device>(" + (a.like_device ? device_literal(*a.like_device, lang) : std::string()) +
             ")";
    case AttrType::Elements: return elements_literal(a.elements, a.sizes, lang);
    case AttrType::Strided: break;  // printed through its parts (Placeholder::Kind::StridedPart)
  }
  PARITY_HARNESS_UNREACHABLE("a Strided attribute has no literal of its own");
}

std::string placeholder(std::string_view name, const Step& step, Lang lang) {
  const Attrs& a = step.attrs;
  const program::Placeholder p = program::resolve_placeholder(spec(step.op), name);
  switch (p.kind) {
    case program::Placeholder::Kind::Operand: return value_name(step.inputs.at(static_cast<std::size_t>(p.operand)));
    case program::Placeholder::Kind::Data: {
      // The whole storage as a typed list: `std::vector<double>{}` is empty, where a bare `{}` inside one would be
      // a storage of one zero.
      auto values = seeded_content(a.seed, storage_extent(a.sizes, a.strides, a.offset), a.dtype);
      return (lang == Lang::Cpp ? "std::vector<double>" : "") + float_list(values, lang);
    }
    case program::Placeholder::Kind::StridedPart:
      if (p.part == "sizes") return int_list(a.sizes, lang);
      if (p.part == "strides") return int_list(a.strides, lang);
      return std::to_string(a.offset);
    case program::Placeholder::Kind::Attribute: return attribute_literal(*p.attr, a, lang);
  }
  PARITY_HARNESS_UNREACHABLE("no case for this Placeholder::Kind");
}

// The op's template with every placeholder a literal of the step.
std::string expression(const Step& step, Lang lang) {
  const OpSpec& op = spec(step.op);
  return program::expand_template(lang == Lang::Cpp ? op.cpp : op.py,
                                  [&](std::string_view name) { return placeholder(name, step, lang); });
}

enum class Outcome { Plain, Raised, Skipped };

Outcome outcome(const Trace* oracle, std::size_t i) {
  if (!oracle || i >= oracle->steps.size()) return Outcome::Plain;
  switch (oracle->steps[i].status) {
    case StepObs::Status::Ok: return Outcome::Plain;
    case StepObs::Status::Error: return Outcome::Raised;
    case StepObs::Status::Skipped: return Outcome::Skipped;
  }
  return Outcome::Plain;
}

std::string step_comment(const Step& step, int i) {
  return "step " + std::to_string(i) + ": " + std::string(spec(step.op).name) +
         (step.grad_enabled ? "" : " (no_grad)");
}

// What a Python repro catches for a step LibTorch raised: the Python class the oracle's exception becomes
// (python_exception_class), so that PyTorch raising another class stops the repro; every class PyTorch raises
// when the oracle named none; any exception for a class Python has no name for.
std::string_view python_exception(const std::optional<judge::ExceptionType>& type) {
  if (!type) return "(RuntimeError, IndexError, ValueError, TypeError)";
  const std::string_view named = python_exception_class(*type);
  return named.empty() ? "Exception" : named;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
    else if (c == '\\') c = '/';  // a trailing backslash would continue a C++ line comment
  return s;
}

// The build lines are those tests/reports/repro_test.py checks (the CMake one) or that work with Debian's libtorch-dev,
// whose headers and libraries lie on the compiler's default paths, and with a LibTorch zip.
constexpr std::string_view kCppPrelude = R"(// Build it with CMake (add -DCMAKE_PREFIX_PATH=<LibTorch folder> for a
// LibTorch zip, or for PyPI's torch wheel its torch/ folder: python -c 'import os, torch; print(os.path.dirname(
// torch.__file__))'), from a CMakeLists.txt beside repro.cpp:
//   cmake_minimum_required(VERSION 3.18)
//   project(repro CXX)
//   find_package(Torch REQUIRED)
//   add_executable(repro repro.cpp)
//   target_include_directories(repro PRIVATE ${TORCH_INCLUDE_DIRS})
//   target_link_libraries(repro torch_cpu c10)
//   set_property(TARGET repro PROPERTY CXX_STANDARD 20)
// then: cmake -S . -B build && cmake --build build && ./build/repro
// (LibTorch 2.x needs C++20. The repro runs on the CPU, so it links LibTorch's CPU libraries only: a CUDA build's
// ${TORCH_LIBRARIES}, the wheel's, also names libtorch_cuda, whose NCCL a CUDA toolkit may not match; such a
// build also wants TORCH_CUDA_ARCH_LIST=9.0 in the environment of the cmake configure, even without a GPU.)
// or with g++, against Debian's libtorch-dev (headers in /usr/include, libraries in /usr/lib/<arch>):
//   g++ -std=c++20 repro.cpp -I/usr/include/torch/csrc/api/include -ltorch_cpu -lc10 -o repro
// or against a LibTorch unpacked in $TORCH (add -D_GLIBCXX_USE_CXX11_ABI=0 for a pre-cxx11 ABI build):
//   g++ -std=c++20 repro.cpp -I$TORCH/include -I$TORCH/include/torch/csrc/api/include
//       -L$TORCH/lib -ltorch_cpu -lc10 -Wl,-rpath,$TORCH/lib -o repro
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

)";

constexpr std::string_view kCppShow = R"(
// The fewest digits that read back as the same double, as the finding and Python print values: the stream's
// default 6 would hide differences the comparison still counts.
static std::string number(double v) {
  std::ostringstream s;
  for (int digits = 1; digits <= std::numeric_limits<double>::max_digits10; ++digits) {
    s.str("");
    s << std::setprecision(digits) << v;
    if (std::strtod(s.str().c_str(), nullptr) == v) break;
  }
  return s.str();
}

// Past kFullValuesUpTo elements parity's trace keeps a summary instead of the values, and so does this: the
// counts of NaNs and infinities, and min, max and sum (in order, as parity sums) of the finite elements.
static void print_values(const torch::Tensor& flat) {
  const double* v = flat.data_ptr<double>();
  const int64_t n = flat.numel();
  if (n <= kFullValuesUpTo) {
    std::cout << "[";
    for (int64_t i = 0; i < n; ++i) std::cout << (i ? ", " : "") << number(v[i]);
    std::cout << "]";
    return;
  }
  int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  double min = INFINITY, max = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(v[i])) ++nan;
    else if (std::isinf(v[i])) ++(v[i] > 0 ? pos_inf : neg_inf);
    else min = std::min(min, v[i]), max = std::max(max, v[i]), sum += v[i];
  }
  if (min > max) min = max = 0;  // no finite element
  std::cout << "<" << n << " elements (summarised): min " << number(min) << ", max " << number(max) << ", sum "
            << number(sum) << ", " << nan << " nan, " << pos_inf << " +inf, " << neg_inf << " -inf>";
}

// values_known false: the elements were never written (empty()), and printing them would print garbage.
static void show(const char* name, const torch::Tensor& t, bool values_known = true) {
  if (!t.defined()) {
    std::cout << name << ": undefined\n";
    return;
  }
  auto flat = t.detach().to(torch::kFloat64).contiguous().flatten();
  // Reading grad_fn regenerates a view's history, which can make it a non-leaf: is_leaf is read first, as
  // parity observes it. For a view made under no_grad whose base was then modified in place, it raises;
  // parity observes that as the value's grad_fn, so it is printed as such and the other values still are.
  const bool requires_grad = t.requires_grad(), is_leaf = t.is_leaf(), retains_grad = t.retains_grad();
  std::string grad_fn = "None", grad_fn_error;
  try {
    if (t.grad_fn()) grad_fn = t.grad_fn()->name();
  } catch (const c10::Error& e) {
    grad_fn = "<raised>";
    grad_fn_error = e.what_without_backtrace();
  }
  std::cout << std::boolalpha << name << ": sizes=" << t.sizes() << " strides=" << t.strides()
            << " offset=" << t.storage_offset() << " dtype=" << t.dtype() << " requires_grad=" << requires_grad
            << " is_leaf=" << is_leaf << " retains_grad=" << retains_grad << " grad_fn=" << grad_fn
            << " version=" << t._version() << " values=";
  if (values_known) print_values(flat);
  else std::cout << "<uninitialised, not printed>";
  std::cout << "\n";
  if (!grad_fn_error.empty()) std::cout << "  grad_fn raised: " << grad_fn_error << "\n";
  if (is_leaf || retains_grad) {
    const torch::Tensor& g = t.grad();
    if (g.defined()) {
      auto gflat = g.detach().to(torch::kFloat64).contiguous().flatten();
      std::cout << "  grad: sizes=" << g.sizes() << " strides=" << g.strides() << " values=";
      print_values(gflat);
      std::cout << "\n";
    }
  }
}
)";

constexpr std::string_view kPythonPrelude = R"(# Run: python3 repro.py
import copy
import functools
import operator

import torch

)";

constexpr std::string_view kPythonShow = R"(
def values(t):
    """t's elements; past FULL_VALUES_UP_TO of them, the summary parity's trace keeps instead: the counts of NaNs
    and infinities, and min, max and sum (in order, as parity sums) of the finite elements."""
    flat = t.detach().flatten()
    if flat.numel() <= FULL_VALUES_UP_TO:
        return flat.tolist()
    v = flat.to(torch.float64)
    finite = v[torch.isfinite(v)]
    lo, hi = (finite.min().item(), finite.max().item()) if finite.numel() else (0.0, 0.0)
    total = functools.reduce(operator.add, finite.tolist(), 0.0)
    nan, pos_inf, neg_inf = (int(c.sum()) for c in (v.isnan(), v == float("inf"), v == float("-inf")))
    return (f"<{flat.numel()} elements (summarised): min {lo!r}, max {hi!r}, sum {total!r}, {nan} nan, "
            f"{pos_inf} +inf, {neg_inf} -inf>")

def show(name, t, values_known=True):
    """values_known False: the elements were never written (empty()), and printing them would print garbage."""
    if t is None:
        print(f"{name}: undefined")
        return
    # Reading grad_fn regenerates a view's history, which can make it a non-leaf: is_leaf is read first, as
    # parity observes it. For a view made under no_grad whose base was then modified in place, it raises;
    # parity observes that as the value's grad_fn, so it is printed as such and the other values still are.
    requires_grad, is_leaf, retains_grad = t.requires_grad, t.is_leaf, t.retains_grad
    grad_fn_error = None
    try:
        grad_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
    except RuntimeError as e:
        grad_fn, grad_fn_error = "<raised>", e
    print(f"{name}: sizes={list(t.shape)} strides={list(t.stride())} offset={t.storage_offset()} "
          f"dtype={t.dtype} requires_grad={requires_grad} is_leaf={is_leaf} retains_grad={retains_grad} "
          f"grad_fn={grad_fn} version={t._version} "
          f"values={values(t) if values_known else '<uninitialised, not printed>'}")
    if grad_fn_error is not None:
        print(f"  grad_fn raised: {grad_fn_error}")
    if (is_leaf or retains_grad) and t.grad is not None:
        print(f"  grad: sizes={list(t.grad.shape)} strides={list(t.grad.stride())} "
              f"values={values(t.grad)}")

)";

// The memos of the program's deepcopy steps (each one copy.deepcopy call), in first-use order.
std::vector<std::int64_t> deepcopy_memos(const Program& p) {
  std::vector<std::int64_t> memos;
  for (const Step& s : p.steps)
    if (s.op == OpId::Deepcopy && std::find(memos.begin(), memos.end(), s.attrs.memo) == memos.end())
      memos.push_back(s.attrs.memo);
  return memos;
}

}  // namespace

namespace {

// Whether a value's elements were ever written, as the judge's last observation of it says (a value of empty() is
// not until an op writes it): a repro prints no uninitialised memory.
bool values_known(const Trace* judge, int id) {
  std::optional<bool> known;
  if (judge)
    for (const StepObs& s : judge->steps)
      for (const judge::TensorObs& o : s.observed)
        if (o.value == id) known = o.values_defined;
  return known.value_or(true);
}

// The check, where there is one, with a step the judge skipped held as recorded: its inputs do not exist here.
std::optional<ReproCheck> check_of(const ReproSides& sides) {
  std::optional<ReproCheck> c = repro_check(sides);
  if (c && c->step >= 0 && outcome(sides.judge, static_cast<std::size_t>(c->step)) == Outcome::Skipped &&
      c->live != ReproCheck::Live::Recorded) {
    c->live = ReproCheck::Live::Recorded;
    c->why_recorded = "the judge skipped this step, as an input was not produced";
  }
  return c;
}

// The title line: which judge the finding's sides come from and which parity made it, so that a repro read later
// (another release, another commit) says what it was made against.
std::string title(const ReproSides& sides, std::string_view language, std::string_view comment) {
  std::string t = std::string(comment) + " parity repro (" + std::string(language) + ")";
  if (!sides.judge_name.empty()) t += ", judged by " + sides.judge_name;
  if (!sides.found_by.empty() && sides.found_by != parity_commit()) t += ", found by parity " + sides.found_by;
  t += ", printed by parity " + std::string(parity_commit()) + ".\n";
  // The torch that runs the repro: LibTorch for the C++ one, PyTorch for the Python one.
  const std::string_view torch = language.starts_with("LibTorch") ? "LibTorch" : "PyTorch";
  if (sides.point)
    t += std::string(comment) + " It checks where parity found the library under test to differ: PASS when the " +
         "library does there what this " + std::string(torch) + " does, else FAIL (exit status 1).\n";
  return t;
}

// The ids of the program values a repro has defined by step `upto` (a skipped step defines none).
std::vector<int> defined_values(const Program& p, const Trace* judge, int upto) {
  std::vector<int> ids;
  for (int i = 0; i <= upto && static_cast<std::size_t>(i) < p.steps.size(); ++i)
    if (!spec(p.steps[static_cast<std::size_t>(i)].op).no_value &&
        outcome(judge, static_cast<std::size_t>(i)) != Outcome::Skipped)
      ids.push_back(i);
  return ids;
}

}  // namespace

std::string cpp_repro(const Program& p, const ReproSides& sides) {
  const Trace* oracle = sides.judge;
  const std::optional<ReproCheck> check = check_of(sides);
  std::ostringstream out;
  // The recipes are long and only their ops' steps call them: a repro is as short as its program allows.
  const std::vector<std::int64_t> memos = deepcopy_memos(p);
  const bool literal = std::ranges::any_of(p.steps, [](const Step& s) { return s.op == OpId::Tensor; });
  out << title(sides, "LibTorch C++", "//") << kCppPrelude << (memos.empty() ? "" : kDeepcopyRecipe)
      << (literal ? kLiteralTensorRecipe : "") << "\nstatic constexpr int64_t kFullValuesUpTo = " << kFullValuesUpTo
      << ";\n" << kCppShow << (check ? check_prelude(Lang::Cpp) : "") << "\nint main() {\n";
  for (auto memo : memos) out << "  DeepcopyMemo " << memo_name(memo) << ";\n";
  std::vector<int> shown;
  for (std::size_t idx = 0; idx < p.steps.size(); ++idx) {
    const Step& step = p.steps[idx];
    const int i = static_cast<int>(idx);
    const bool has_value = !spec(step.op).no_value;
    const std::string v = value_name(i);
    const std::string expr = expression(step, Lang::Cpp);
    const std::string stmt = has_value ? v + " = " + expr + ";" : expr + ";";
    const std::string guard = step.grad_enabled ? "" : "torch::NoGradGuard no_grad; ";
    const bool checked = check && check->step == i && check->live != ReproCheck::Live::Recorded;
    out << "  // " << step_comment(step, i) << (checked ? " (the step the check below observes)" : "") << "\n";
    switch (outcome(oracle, idx)) {
      case Outcome::Skipped:
        out << "  // skipped on LibTorch: an input value was not produced\n";
        if (check && check->step == i) out << check_statements(*check, Lang::Cpp, {}, "");
        continue;
      case Outcome::Raised:
        out << "  // raised on LibTorch: " << one_line(oracle->steps[idx].message.substr(0, 200)) << "\n";
        [[fallthrough]];
      case Outcome::Plain:
        if (checked || outcome(oracle, idx) == Outcome::Raised) {
          if (has_value) out << "  torch::Tensor " << v << ";\n";
          if (checked) out << "  std::exception_ptr raised;\n";
          out << "  try {\n    " << guard << stmt << "\n  } catch (const c10::Error& e) {\n"
              << (checked ? "    raised = std::current_exception();\n" : "")
              << "    std::cout << \"step " << i << " raised: \" << e.what_without_backtrace() << std::endl;\n"
              << "  } catch (const std::exception& e) {\n"
              << (checked ? "    raised = std::current_exception();\n" : "")
              << "    std::cout << \"step " << i << " raised: \" << e.what() << std::endl;\n  }\n";
        } else if (!step.grad_enabled) {
          if (has_value) out << "  torch::Tensor " << v << ";\n";
          out << "  { " << guard << stmt << " }\n";
        } else {
          out << "  " << (has_value ? "torch::Tensor " : "") << stmt << "\n";
        }
        break;
    }
    if (has_value) shown.push_back(i);
    if (check && check->step == i) out << check_statements(*check, Lang::Cpp, defined_values(p, oracle, i), "raised");
  }
  if (check && check->step < 0) out << check_statements(*check, Lang::Cpp, {}, "");
  out << "  // LibTorch's side of every value.\n";
  for (int id : shown)
    out << "  show(\"" << value_name(id) << "\", " << value_name(id) << (values_known(oracle, id) ? "" : ", false")
        << ");\n";
  out << (check ? check_finish(Lang::Cpp) : "  return 0;\n") << "}\n";
  return out.str();
}

std::string python_statement(const Step& step, int index) {
  const std::string expr = expression(step, Lang::Python);
  return spec(step.op).no_value ? expr : value_name(index) + " = " + expr;
}

std::string python_repro(const Program& p, const ReproSides& sides) {
  const Trace* oracle = sides.judge;
  const std::optional<ReproCheck> check = check_of(sides);
  std::ostringstream out;
  out << title(sides, "PyTorch", "#") << kPythonPrelude << "FULL_VALUES_UP_TO = " << kFullValuesUpTo << "\n"
      << kPythonShow << (check ? check_prelude(Lang::Python) : "") << "\n";
  for (auto memo : deepcopy_memos(p)) out << memo_name(memo) << " = {}\n";
  std::vector<int> shown;
  for (std::size_t idx = 0; idx < p.steps.size(); ++idx) {
    const Step& step = p.steps[idx];
    const int i = static_cast<int>(idx);
    const bool has_value = !spec(step.op).no_value;
    const std::string v = value_name(i);
    const std::string stmt = python_statement(step, i);
    const bool checked = check && check->step == i && check->live != ReproCheck::Live::Recorded;
    out << "# " << step_comment(step, i) << (checked ? " (the step the check below observes)" : "") << "\n";
    switch (outcome(oracle, idx)) {
      case Outcome::Skipped:
        out << "# skipped on LibTorch: an input value was not produced\n";
        if (check && check->step == i) out << check_statements(*check, Lang::Python, {}, "");
        continue;
      case Outcome::Raised:
        out << "# raised on LibTorch: " << one_line(oracle->steps[idx].message.substr(0, 200)) << "\n";
        [[fallthrough]];
      case Outcome::Plain:
        if (checked || outcome(oracle, idx) == Outcome::Raised) {
          if (has_value) out << v << " = None\n";
          if (checked) out << "raised = None\n";
          out << "try:\n";
          if (!step.grad_enabled) out << "    with torch.no_grad():\n        " << stmt << "\n";
          else out << "    " << stmt << "\n";
          // The checked step catches whatever is raised, to observe it; another step what LibTorch raised.
          const std::string_view caught =
              checked ? "Exception" : python_exception(oracle->steps[idx].exception);
          out << "except " << caught << " as e:\n" << (checked ? "    raised = e\n" : "")
              << "    print(f\"step " << i << " raised {type(e).__name__}: {e}\")\n";
        } else if (!step.grad_enabled) {
          out << "with torch.no_grad():\n    " << stmt << "\n";
        } else {
          out << stmt << "\n";
        }
        break;
    }
    if (has_value) shown.push_back(i);
    if (check && check->step == i)
      out << check_statements(*check, Lang::Python, defined_values(p, oracle, i), "raised");
  }
  if (check && check->step < 0) out << check_statements(*check, Lang::Python, {}, "");
  out << "\n# LibTorch's side of every value.\n";
  for (int id : shown)
    out << "show(\"" << value_name(id) << "\", " << value_name(id) << (values_known(oracle, id) ? "" : ", False")
        << ")\n";
  if (check) out << check_finish(Lang::Python);
  return out.str();
}

}  // namespace parity::reports
