// The C++ class of a step's exception: which of c10's Error subclasses LibTorch threw (TORCH_CHECK_INDEX throws
// c10::IndexError, TORCH_CHECK_VALUE c10::ValueError, ...). Python sees it as the exception type (IndexError,
// ValueError, ...), so code that catches one kind of error depends on it as much as on the category.
#pragma once
#include <optional>
#include <string_view>

namespace parity::judge {

#define PARITY_EXCEPTION_TYPES(X)                                                         \
  X(Error, "c10::Error")                             /* TORCH_CHECK: Python's RuntimeError */ \
  X(IndexError, "c10::IndexError")                   /* TORCH_CHECK_INDEX */              \
  X(ValueError, "c10::ValueError")                   /* TORCH_CHECK_VALUE */              \
  X(TypeError, "c10::TypeError")                     /* TORCH_CHECK_TYPE */               \
  X(NotImplementedError, "c10::NotImplementedError") /* TORCH_CHECK_NOT_IMPLEMENTED */    \
  X(LinAlgError, "c10::LinAlgError")                 /* TORCH_CHECK_LINALG */             \
  X(OutOfMemoryError, "c10::OutOfMemoryError")       /* a failed allocation */            \
  X(RuntimeError, "std::runtime_error") /* thrown outside c10's checks (InferSize, checked_convert) */ \
  X(LogicError, "std::logic_error")     /* thrown outside c10's checks (1.13's AccumulateGrad) */     \
  X(Other, "other")              /* a class not named here: no c10::Error, or a subclass not listed */

enum class ExceptionType {
#define PARITY_ENUM_EXCEPTION(name, str) name,
  PARITY_EXCEPTION_TYPES(PARITY_ENUM_EXCEPTION)
#undef PARITY_ENUM_EXCEPTION
};

std::string_view to_string(ExceptionType);
std::optional<ExceptionType> parse_exception_type(std::string_view);

}  // namespace parity::judge
