// Which c10 class the checks whose class changed between releases throw, by the release impl follows. A check
// whose class never changed names it where it is made (PARITY_CHECK_AS).
#pragma once
#include "impl/error.h"
#include "impl/version_gate.h"

namespace parity::impl {

// A refusal of a dtype no kernel takes: a missing kernel's ("abs_cpu" not implemented for 'Bool'), and neg's,
// sub's, relu's and mean's own (VersionGate::DtypeRefusalsNotImplemented).
inline ErrorClass dtype_refusal_class() {
  return follows(VersionGate::DtypeRefusalsNotImplemented) ? ErrorClass::NotImplementedError : ErrorClass::Error;
}

// What LibTorch 1.13 threw as a plain std::runtime_error: view's size inference, requires_grad_(False) on a
// non-leaf, a second backward through CopySlices (VersionGate::PlainRuntimeErrorsAreChecks).
inline ErrorClass plain_runtime_error_class(TorchVersion release) {
  return follows(VersionGate::PlainRuntimeErrorsAreChecks, release) ? ErrorClass::Error : ErrorClass::RuntimeError;
}
inline ErrorClass plain_runtime_error_class() { return plain_runtime_error_class(followed_release()); }

// AccumulateGrad's refusal of a leaf that has a grad_fn since its graph was made: a std::logic_error in 1.13
// (VersionGate::PlainRuntimeErrorsAreChecks).
inline ErrorClass moved_leaf_error_class() {
  return follows(VersionGate::PlainRuntimeErrorsAreChecks) ? ErrorClass::Error : ErrorClass::LogicError;
}

}  // namespace parity::impl
