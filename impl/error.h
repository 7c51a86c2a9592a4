// impl's exceptions: a kind (what the caller did wrong) and PyTorch's wording of the message.
#pragma once
#include <stdexcept>
#include <string>

namespace parity::impl {

enum class ErrorKind {
  VersionMismatch, GraphFreed, LeafInPlace, ViewInPlace, NoGradFn, NonScalarBackward, RequiresGradFlag,
  RetainGrad, DetachView, Shape, ViewStride, IndexRange, DType, MemoryFormat, Overlap, StorageBounds, Argument,
  Device,
  DeepcopyNonLeaf  // deepcopy of a tensor that is not a graph leaf
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

}  // namespace parity::impl

// Raises impl::Error(kind, message) unless cond holds. A macro so that the message, often built from sizes and
// strides, is only formatted on failure: checks sit on every op's hot path.
#define PARITY_CHECK(cond, kind, message)                                   \
  do {                                                                     \
    if (!(cond)) ::parity::impl::fail(::parity::impl::kind, (message));   \
  } while (0)
