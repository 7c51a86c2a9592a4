// impl's exceptions: a kind (what the caller did wrong) and PyTorch's wording of the message.
#pragma once
#include <stdexcept>
#include <string>

namespace parity::impl {

enum class ErrorKind {
  VersionMismatch, GraphFreed, LeafInPlace, ViewInPlace, NoGradFn, NonScalarBackward, RequiresGradFlag,
  RetainGrad, DetachView, Shape, ViewStride, IndexRange, DType, MemoryFormat, Overlap, StorageBounds, Argument,
  Device,
  DeepcopyNonLeaf,  // deepcopy of a tensor that is not a graph leaf
  OutRequiresGrad,  // an out= function given a tensor that requires grad, with grad mode on
  InternalAssert    // a "cannot happen" branch was reached: a bug in impl, not in the caller
};

// The c10 class ATen throws at a check, which Python shows as the exception's type: TORCH_CHECK's c10::Error
// (RuntimeError), or the subclass TORCH_CHECK_INDEX, TORCH_CHECK_VALUE, TORCH_CHECK_TYPE or
// TORCH_CHECK_NOT_IMPLEMENTED throws. A property of the check, not of the kind: ATen checks a dtype with an
// IndexError (an index tensor's) as well as with a plain Error.
// RuntimeError: a plain std::runtime_error, which LibTorch throws outside c10's checks (a view's size inference,
// a scalar's overflow check).
enum class ErrorClass { Error, IndexError, ValueError, TypeError, NotImplementedError, RuntimeError, LogicError };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, ErrorClass error_class = ErrorClass::Error)
      : std::runtime_error(message), kind_(kind), class_(error_class) {}
  ErrorKind kind() const { return kind_; }
  ErrorClass error_class() const { return class_; }

 private:
  ErrorKind kind_;
  ErrorClass class_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message, ErrorClass error_class = ErrorClass::Error) {
  throw Error(kind, message, error_class);
}

// c10's wording ("INTERNAL ASSERT FAILED at FILE:LINE"), so that both sides of a comparison classify the same way.
[[noreturn]] inline void internal_assert_failed(const char* condition, const char* file, int line,
                                                const std::string& message) {
  throw Error(ErrorKind::InternalAssert, std::string(condition) + " INTERNAL ASSERT FAILED at \"" + file + "\":" +
                                             std::to_string(line) + ", please report a bug to parity's impl. " +
                                             message);
}

}  // namespace parity::impl

// Raises impl::Error(kind, message) unless cond holds. A macro so that the message, often built from sizes and
// strides, is only formatted on failure: checks sit on every op's hot path.
#define PARITY_CHECK(cond, kind, message)                                   \
  do {                                                                     \
    if (!(cond)) ::parity::impl::fail(::parity::impl::kind, (message));   \
  } while (0)
// The same, for a check ATen makes with TORCH_CHECK_INDEX (error_class IndexError), TORCH_CHECK_VALUE, ...
#define PARITY_CHECK_AS(cond, kind, error_class, message)                                                    \
  do {                                                                                                      \
    if (!(cond)) ::parity::impl::fail(::parity::impl::kind, (message), ::parity::impl::ErrorClass::error_class); \
  } while (0)

// For branches that cannot be reached unless impl itself is wrong (an enum value with no case, a broken
// invariant). Never a silent default: the harness records it under the `internal_assert` error category.
#define PARITY_INTERNAL_ASSERT(cond, message)                                                  \
  do {                                                                                        \
    if (!(cond)) ::parity::impl::internal_assert_failed(#cond, __FILE__, __LINE__, (message)); \
  } while (0)
#define PARITY_UNREACHABLE(message) ::parity::impl::internal_assert_failed("unreachable", __FILE__, __LINE__, (message))
