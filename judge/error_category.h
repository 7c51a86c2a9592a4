// Error categories: what kind of mistake a step made, independent of the exact wording of a message.
// LibTorch's messages are mapped to categories by one table (classify); impl raises categories directly.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace parity::judge {

#define PARITY_ERROR_CATEGORIES(X)                                                                   \
  X(VersionMismatch, "version_mismatch")      /* saved tensor modified by an in-place op */          \
  X(GraphFreed, "graph_freed")                /* second backward through a freed graph */            \
  X(LeafInPlace, "leaf_inplace")              /* in-place on a leaf (or a view of one) needing grad */ \
  X(ViewInPlace, "view_inplace")              /* in-place on a no_grad / multi-output view */        \
  X(NoGradFn, "no_grad_fn")                   /* backward of a tensor that does not require grad */  \
  X(NonScalarBackward, "nonscalar_backward")  /* implicit gradient for a non-scalar output */        \
  X(RequiresGradFlag, "requires_grad_flag")   /* requires_grad on non-leaf or non-floating tensor */ \
  X(RetainGrad, "retain_grad")                /* retain_grad on a tensor that does not require grad */ \
  X(DetachView, "detach_view")                /* detach_ on a view */                                \
  X(DeepcopyNonLeaf, "deepcopy_nonleaf")      /* copy.deepcopy of a tensor that is not a leaf */     \
  X(OutRequiresGrad, "out_requires_grad")     /* an out= function given a tensor requiring grad */   \
  X(Shape, "shape")                           /* broadcast / size mismatch, invalid view shape */    \
  X(ViewStride, "view_stride")                /* view() impossible for these strides */              \
  X(IndexRange, "index_range")                /* dim or index out of range */                        \
  X(DType, "dtype")                           /* dtype not supported / cast not allowed */           \
  X(MemoryFormat, "memory_format")            /* format not valid for the rank or op */              \
  X(Overlap, "overlap")                       /* write to overlapping memory */                      \
  X(StorageBounds, "storage_bounds")          /* as_strided / set outside the storage */             \
  X(Device, "device")                         /* tensors on two devices, or a device this build lacks */ \
  X(Argument, "argument")                     /* other invalid argument (negative size, step) */     \
  X(InternalAssert, "internal_assert")        /* the library's own consistency check failed (a bug) */ \
  X(Crash, "crash")                           /* the backend process died */                         \
  X(Timeout, "timeout")                       /* the backend did not finish in time */               \
  X(OutOfMemory, "out_of_memory")             /* the backend exceeded the campaign's memory limit */ \
  X(Unclassified, "unclassified")             /* a message no rule knows: extend the table */

enum class ErrorCategory {
#define PARITY_ENUM_CAT(name, str) name,
  PARITY_ERROR_CATEGORIES(PARITY_ENUM_CAT)
#undef PARITY_ENUM_CAT
};

inline constexpr std::size_t kErrorCategoryCount = 0
#define PARITY_COUNT_CAT(name, str) +1
    PARITY_ERROR_CATEGORIES(PARITY_COUNT_CAT)
#undef PARITY_COUNT_CAT
    ;

std::string_view to_string(ErrorCategory);
std::optional<ErrorCategory> parse_error_category(std::string_view);

// Maps a LibTorch error message to its category (first matching rule of one ordered table).
ErrorCategory classify_torch_message(std::string_view message);

}  // namespace parity::judge
