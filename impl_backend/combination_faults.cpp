#include "impl_backend/combination_faults.h"

#include "impl/autograd/meta.h"
#include "program/internal_assert.h"

namespace parity::impl_backend {

namespace {

bool written_view(const impl::Tensor& t) { return impl::autograd::is_view(t) && t.version() > 0; }

}  // namespace

bool CombinationFaults::holds(const PlantedFault& fault, const program::Step& step,
                              const std::vector<const impl::Tensor*>& operands) {
  switch (fault.kind) {
    case PlantedFault::Kind::ViewWritten: return !operands.empty() && written_view(*operands[0]);
    case PlantedFault::Kind::EdgeScalar: return program::is_edge_scalar(step.attrs.scalar.value);
    case PlantedFault::Kind::SharedStorage:
      for (std::size_t k = 1; k < operands.size(); ++k)
        if (operands[k]->storage().key() == operands[0]->storage().key()) return true;
      return false;
    case PlantedFault::Kind::ZeroDimOther:
      return operands.size() >= 2 && operands[1]->sizes().empty() && operands[1]->dtype() != operands[0]->dtype();
    default: break;
  }
  PARITY_HARNESS_UNREACHABLE("planted fault " + fault.text() + " has no condition on a step");
}

void CombinationFaults::corrupt(const impl::Tensor& t) {
  if (t.numel() == 0 || t.device().type != impl::DeviceType::CPU) return;
  auto overwrite = [](auto* first) { *first = *first == 7 ? 0 : 7; };
  if (t.dtype() == impl::ScalarType::Float32) overwrite(t.data<float>());
  else if (t.dtype() == impl::ScalarType::Float64) overwrite(t.data<double>());
}

CombinationFaults::MemoLink CombinationFaults::memo_link(const impl::Tensor& source, const impl::DeepcopyMemo& memo,
                                                         const std::vector<std::optional<impl::Tensor>>& live) {
  const impl::Tensor g = impl::autograd::grad(source);
  if (g.defined() && memo.tensors.contains(g.impl())) return MemoLink::GradCopiedFirst;
  for (const auto& v : live)
    if (v && memo.tensors.contains(v->impl()) && impl::autograd::grad(*v).impl() == source.impl())
      return MemoLink::CopiedAsAGrad;
  return MemoLink::None;
}

impl::Tensor CombinationFaults::unlink(const impl::Tensor& copy, MemoLink link) {
  if (link == MemoLink::CopiedAsAGrad) return impl::clone(copy);
  if (link == MemoLink::GradCopiedFirst)
    if (const impl::Tensor g = impl::autograd::grad(copy); g.defined()) impl::autograd::set_grad(copy, impl::clone(g));
  return copy;
}

void CombinationFaults::retained(const impl::Tensor& t) {
  if (impl::autograd::is_view(t)) retained_.push_back({t, t.version()});
}

void CombinationFaults::after_backward() const {
  for (const Retained& r : retained_) {
    if (r.tensor.version() == r.version) continue;
    const impl::Tensor g = impl::autograd::grad(r.tensor);
    if (g.defined()) corrupt(g);
  }
}

}  // namespace parity::impl_backend
