// copy.deepcopy of a tensor, as Python's Tensor.__deepcopy__ does it in PyTorch 1.13 (torch/_tensor.py).
#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"

namespace parity::impl {

Tensor deepcopy(const Tensor& x, DeepcopyMemo& memo) {
  PARITY_CHECK(autograd::is_leaf(x), ErrorKind::DeepcopyNonLeaf,
               "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment");
  if (auto it = memo.tensors.find(x.impl()); it != memo.tensors.end()) return it->second;
  // A tensor is remembered only once copied, so a cycle of gradients (x.grad = x is allowed in C++) recurses in
  // Python until RecursionError.
  PARITY_CHECK(memo.copying.insert(x.impl()).second, ErrorKind::Argument,
               "maximum recursion depth exceeded while calling a Python object");
  autograd::NoGradGuard no_grad;
  // The storage is deep-copied whole, once per memo, so tensors that shared a storage share its copy.
  auto copied = memo.storages.find(x.storage().key());
  if (copied == memo.storages.end()) {
    auto numel = static_cast<std::int64_t>(x.storage().nbytes() / element_size(x.dtype()));
    Tensor whole = Tensor::over(x.storage(), Layout{{numel}, {1}, 0}, x.dtype(), VersionCounter());
    copied = memo.storages.emplace(x.storage().key(), clone(whole)).first;
  }
  // new_empty([]).set_(storage, offset, size, stride): a tensor of its own (not a view, its own version counter)
  // whose version set_ bumped to 1.
  Tensor out = Tensor::over(copied->second.storage(), x.layout(), x.dtype(), VersionCounter());
  out.bump_version();
  autograd::set_requires_grad(out, autograd::requires_grad(x));
  if (Tensor g = autograd::grad(x); g.defined()) autograd::materialize(out).grad = deepcopy(g, memo);
  memo.copying.erase(x.impl());
  memo.tensors.emplace(x.impl(), out);
  return out;
}

}  // namespace parity::impl
