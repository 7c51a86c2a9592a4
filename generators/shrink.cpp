#include "generators/shrink.h"

#include <algorithm>

#include "generators/program_state.h"
#include "generators/strides.h"

namespace parity::generators {

using program::Attr;
using program::OpId;
using program::Program;
using program::Step;

namespace {

bool reads(const Step& s, Attr a) { return program::spec(s.op).reads(a); }

bool canonical_layout(const Step& s) {
  return s.attrs.offset == 0 && s.attrs.strides == contiguous_strides(s.attrs.sizes);
}

// Each simplification turns one non-simple attribute of a step into its simple value (or does nothing).
using Simplify = bool (*)(Step&);
const Simplify kSimplifications[] = {
    [](Step& s) {
      if (!reads(s, Attr::RequiresGrad) || !s.attrs.requires_grad) return false;
      s.attrs.requires_grad = false;
      return true;
    },
    [](Step& s) {
      if (s.grad_enabled) return false;
      s.grad_enabled = true;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::RetainGraph) || !s.attrs.retain_graph) return false;
      s.attrs.retain_graph = false;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::CreateGraph) || !s.attrs.create_graph) return false;
      s.attrs.create_graph = false;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::AllowUnused) || !s.attrs.allow_unused) return false;
      s.attrs.allow_unused = false;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::Keepdim) || !s.attrs.keepdim) return false;
      s.attrs.keepdim = false;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::MemoryFormat) || s.attrs.memory_format == program::MemoryFormat::Contiguous) return false;
      s.attrs.memory_format = program::MemoryFormat::Contiguous;
      return true;
    },
    [](Step& s) {
      if (!reads(s, Attr::DType) || s.attrs.dtype == program::DType::Float32) return false;
      s.attrs.dtype = program::DType::Float32;
      return true;
    },
    [](Step& s) {
      if (s.op != OpId::Rand || canonical_layout(s) || s.attrs.sizes.size() != s.attrs.strides.size()) return false;
      s.attrs.strides = contiguous_strides(s.attrs.sizes);
      s.attrs.offset = 0;
      return true;
    },
};

std::int64_t step_complexity(const Step& s) {
  std::int64_t c = 0;
  for (Simplify f : kSimplifications) {
    Step copy = s;
    c += f(copy) ? 1 : 0;
  }
  return c;
}

}  // namespace

Program remove_step(const Program& p, int step) {
  const std::size_t n = p.steps.size();
  std::vector<bool> removed(n, false);
  std::vector<int> renumber(n, -1);
  Program out;
  for (std::size_t i = 0; i < n; ++i) {
    bool drop = static_cast<int>(i) == step;
    for (int in : p.steps[i].inputs)
      if (in >= 0 && static_cast<std::size_t>(in) < n && removed[static_cast<std::size_t>(in)]) drop = true;
    if (drop) {
      removed[i] = true;
      continue;
    }
    renumber[i] = static_cast<int>(out.steps.size());
    Step s = p.steps[i];
    for (int& in : s.inputs)
      if (in >= 0 && static_cast<std::size_t>(in) < n) in = renumber[static_cast<std::size_t>(in)];
    out.steps.push_back(std::move(s));
  }
  return out;
}

Program bypass_step(const Program& p, int step, std::size_t operand) {
  const auto& s = p.steps[static_cast<std::size_t>(step)];
  if (operand >= s.inputs.size()) return p;
  const int replacement = s.inputs[operand];
  Program rewired = p;
  for (std::size_t i = static_cast<std::size_t>(step) + 1; i < rewired.steps.size(); ++i)
    for (int& in : rewired.steps[i].inputs)
      if (in == step) in = replacement;
  return remove_step(rewired, step);
}

std::int64_t complexity(const Program& p) {
  std::int64_t c = 1000 * static_cast<std::int64_t>(p.steps.size());
  for (const auto& s : p.steps) c += step_complexity(s);
  return c;
}

std::vector<Program> shrink_candidates(const Program& p) {
  std::vector<Program> out;
  // No candidate may hold a step whose LibTorch behaviour is undefined (removing a step can make one).
  auto add = [&](Program c) {
    if (c == p || std::find(out.begin(), out.end(), c) != out.end()) return;
    const auto infos = analyze(c);
    if (std::any_of(infos.begin(), infos.end(), [](const StepInfo& s) { return s.undefined; })) return;
    out.push_back(std::move(c));
  };
  const int n = static_cast<int>(p.steps.size());
  if (n >= 4) {
    Program half;
    half.steps.assign(p.steps.begin(), p.steps.begin() + n / 2);
    add(std::move(half));
  }
  for (int i = n - 1; i >= 0; --i) add(remove_step(p, i));

  const auto expected = analyze(p);
  // Splicing a step out of a chain keeps what follows it, when everything after still behaves as before.
  for (int i = n - 1; i >= 0; --i) {
    const Step& s = p.steps[static_cast<std::size_t>(i)];
    if (s.inputs.empty() || program::spec(s.op).no_value) continue;
    // Any operand may stand in for the result (copy_'s source does for empty_like(x).copy_(x)).
    for (std::size_t k = 0; k < s.inputs.size(); ++k) {
      Program c = bypass_step(p, i, k);
      auto want = expected;
      want.erase(want.begin() + i);
      if (c.steps.size() + 1 == p.steps.size() && analyze(c) == want) add(std::move(c));
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    for (Simplify f : kSimplifications) {
      Program c = p;
      if (!f(c.steps[static_cast<std::size_t>(i)])) continue;
      if (analyze(c) == expected) add(std::move(c));
    }
  }
  return out;
}

rc::Seq<Program> shrinks(const Program& p) { return rc::seq::fromContainer(shrink_candidates(p)); }

}  // namespace parity::generators
