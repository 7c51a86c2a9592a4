#include "generators/selection.h"

#include <algorithm>

namespace parity::generators {

using program::Attr;
using program::Program;
using program::Step;

bool Selection::everything() const {
  return std::all_of(ops.begin(), ops.end(), [](bool b) { return b; }) &&
         (dtypes.empty() || std::all_of(std::begin(program::kAllDTypes), std::end(program::kAllDTypes),
                                        [&](program::DType d) {
                                          return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
                                        }));
}

bool Selection::allows(const Step& step) const {
  if (!ops.empty() && !ops.at(static_cast<std::size_t>(step.op))) return false;
  if (!dtypes.empty() && program::spec(step.op).reads(Attr::DType) &&
      std::find(dtypes.begin(), dtypes.end(), step.attrs.dtype) == dtypes.end())
    return false;
  return true;
}

Program select_steps(const Program& p, const Selection& selection) {
  if (selection.everything()) return p;
  const std::size_t n = p.steps.size();
  std::vector<int> renumber(n, -1);
  Program out;
  for (std::size_t i = 0; i < n; ++i) {
    const Step& s = p.steps[i];
    bool keep = selection.allows(s);
    for (int in : s.inputs)
      if (in >= 0 && static_cast<std::size_t>(in) < n && renumber[static_cast<std::size_t>(in)] < 0) keep = false;
    if (!keep) continue;
    renumber[i] = static_cast<int>(out.steps.size());
    Step kept = s;
    for (int& in : kept.inputs)
      if (in >= 0 && static_cast<std::size_t>(in) < n) in = renumber[static_cast<std::size_t>(in)];
    out.steps.push_back(std::move(kept));
  }
  return out;
}

}  // namespace parity::generators
