// How the combination faults of planted_faults.h misbehave in impl's session: each is a condition on a step and
// the session's tensors, and one wrong value where it holds. They stand for the bugs that hide where two
// situations meet on one tensor, so that parity can measure how fast it finds them (bench/detection_bench.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "impl/ops.h"
#include "impl/tensor.h"
#include "impl_backend/planted_faults.h"
#include "program/program.h"

namespace parity::impl_backend {

class CombinationFaults {
 public:
  // Whether `fault` (ViewWritten, EdgeScalar, SharedStorage or ZeroDimOther) holds for `step` over its operands.
  static bool holds(const PlantedFault& fault, const program::Step& step, const std::vector<const impl::Tensor*>& operands);
  // Overwrites the first element of a float32 or float64 tensor on the CPU, bumping no version.
  static void corrupt(const impl::Tensor&);

  // GradMemo: how `source`, about to be deep-copied under `memo`, meets a gradient the memo copied. `live` is every
  // value of the session, to find the tensor whose .grad `source` is.
  enum class MemoLink { None, GradCopiedFirst, CopiedAsAGrad };
  static MemoLink memo_link(const impl::Tensor& source, const impl::DeepcopyMemo& memo,
                            const std::vector<std::optional<impl::Tensor>>& live);
  // GradMemo: the deep copy as the fault makes it, its link to the memo's copy broken (values kept).
  static impl::Tensor unlink(const impl::Tensor& copy, MemoLink link);

  // StaleRetainedView: retain_grad ran on `t` (kept only when it is a view).
  void retained(const impl::Tensor& t);
  // StaleRetainedView: a backward ran; each retained view written since its retain_grad gets a wrong .grad.
  void after_backward() const;

 private:
  struct Retained {
    impl::Tensor tensor;
    std::uint32_t version;  // at its retain_grad
  };
  std::vector<Retained> retained_;
};

}  // namespace parity::impl_backend
