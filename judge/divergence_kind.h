// Divergence kinds: which observation differed first between impl and LibTorch (judge/compare.cpp emits
// them, the evaluator adds crash, timeout and out_of_memory). Their names are what findings.jsonl and run.json write
// (reports/schema/common.schema.json, divergence_kind).
#pragma once
#include <optional>
#include <string_view>

namespace parity::judge {

#define PARITY_DIVERGENCE_KINDS(X)                                                                  \
  X(StepCount, "step_count")            /* the traces have different numbers of steps */            \
  X(Status, "status")                   /* a step ran on one side and raised or was skipped */      \
  X(ErrorCategory, "error_category")    /* both raised, for different reasons */                   \
  X(ExceptionType, "exception_type")    /* both raised for one reason, as other C++ classes */      \
  X(Message, "message")                 /* both raised for one reason, in other words */           \
  X(ObservedSet, "observed_set")        /* a step observed different values */                     \
  X(Sizes, "sizes")                                                                                 \
  X(DType, "dtype")                                                                                 \
  X(Device, "device")                                                                               \
  X(Strides, "strides")                                                                             \
  X(StridesSize1, "strides_size1")      /* minor: strides differ only where they cannot matter */  \
  X(Offset, "offset")                   /* minor when the tensor is empty */                        \
  X(Alias, "alias")                                                                                 \
  X(Identity, "identity")               /* is_same: which program value is this very tensor */      \
  X(View, "view")                                                                                   \
  X(Version, "version")                                                                             \
  X(RequiresGrad, "requires_grad")                                                                  \
  X(IsLeaf, "is_leaf")                                                                              \
  X(RetainsGrad, "retains_grad")                                                                    \
  X(GradFn, "grad_fn")                                                                              \
  X(Contiguity, "contiguity")                                                                       \
  X(Values, "values")                                                                               \
  X(GradDefined, "grad_defined")                                                                    \
  X(GradSizes, "grad_sizes")                                                                        \
  X(GradDType, "grad_dtype")                                                                        \
  X(GradAlias, "grad_alias")                                                                        \
  X(GradIdentity, "grad_identity")      /* .grad is a program value, or another tensor than before */ \
  X(GradVersion, "grad_version")        /* .grad's own version counter */                              \
  X(GradStrides, "grad_strides")                                                                    \
  X(GradStridesSize1, "grad_strides_size1") /* minor */                                             \
  X(GradValues, "grad_values")                                                                      \
  X(Schema, "schema")                   /* a step wrote or aliased what its ATen schema does not allow */ \
  X(Crash, "crash")                     /* the case's process died (or a protocol backend's) */     \
  X(Protocol, "protocol")               /* a protocol backend broke the protocol */                 \
  X(Timeout, "timeout")                 /* the case's process hung */                               \
  X(OutOfMemory, "out_of_memory")       /* the case's process exceeded the campaign's memory limit */

enum class DivergenceKind {
#define PARITY_ENUM_KIND(name, str) name,
  PARITY_DIVERGENCE_KINDS(PARITY_ENUM_KIND)
#undef PARITY_ENUM_KIND
};

std::string_view to_string(DivergenceKind);
std::optional<DivergenceKind> parse_divergence_kind(std::string_view);

}  // namespace parity::judge
