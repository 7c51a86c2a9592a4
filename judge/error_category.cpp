#include "judge/error_category.h"

#include <array>
#include <utility>

namespace parity::judge {


namespace {
struct CategoryName {
  ErrorCategory category;
  std::string_view name;
};
constexpr CategoryName kNames[] = {
#define PARITY_NAME_CAT(name, str) {ErrorCategory::name, str},
    PARITY_ERROR_CATEGORIES(PARITY_NAME_CAT)
#undef PARITY_NAME_CAT
};

// Ordered: the first rule whose needle occurs in the message wins. Needles are stable fragments of
// LibTorch's messages (c10/ATen/autograd) that have kept their wording from 1.13 through 2.x.
constexpr std::pair<std::string_view, ErrorCategory> kRules[] = {
    {"INTERNAL ASSERT FAILED", ErrorCategory::InternalAssert},
    // Devices: TensorIterator's and the CUDA wrappers' checks (1.13: "but found at least two devices, cuda:0 and
    // cpu!"; 2.x's wrappers: "but got mat2 is on cpu, different from other tensors on cuda:0"), copy_ and mm's
    // own, and a CUDA tensor asked of a LibTorch without CUDA (its CPU libraries alone, or no driver).
    {"Expected all tensors to be on the same device", ErrorCategory::Device},
    {"with arguments from the 'CUDA' backend", ErrorCategory::Device},
    {"indices should be either on", ErrorCategory::Device},  // at::index: an index on another device
    {"expected self and mask to be on the same device", ErrorCategory::Device},  // masked_fill__cuda
    {"CPU Scalar support for", ErrorCategory::Device},                     // addcmul_cuda_kernel
    {"Trying to pass too many CPU scalars to non-CPU kernel", ErrorCategory::Device},
    {"for value tensor", ErrorCategory::Device},  // index_put_ accumulating on cuda: the values' device
    {"PyTorch is not linked with support for cuda devices", ErrorCategory::Device},
    {"Found no NVIDIA driver on your system", ErrorCategory::Device},
    {"no CUDA GPUs are available", ErrorCategory::Device},
    {"Torch not compiled with CUDA enabled", ErrorCategory::Device},
    {"modified by an inplace operation", ErrorCategory::VersionMismatch},
    {"backward through the graph a second time", ErrorCategory::GraphFreed},
    {"leaf Variable that requires grad is being used in an in-place operation", ErrorCategory::LeafInPlace},
    {"created in no_grad mode", ErrorCategory::ViewInPlace},
    {"is a view and is being modified inplace", ErrorCategory::ViewInPlace},
    {"function that returns multiple views", ErrorCategory::ViewInPlace},  // grad_fn of a rebased multi-output view
    {"its base or another view of its base has been modified inplace", ErrorCategory::ViewInPlace},
    {"support the deepcopy protocol", ErrorCategory::DeepcopyNonLeaf},
    {"functions with out=... arguments don't support automatic differentiation", ErrorCategory::OutRequiresGrad},
    {"- expected device", ErrorCategory::Device},                          // a gradient on another device
    {"invalid gradient at index", ErrorCategory::Shape},                   // backward(gradient) of another shape
    {"does not require grad and does not have a grad_fn", ErrorCategory::NoGradFn},
    {"grad can be implicitly created only for scalar outputs", ErrorCategory::NonScalarBackward},
    {"can only change requires_grad flags of leaf variables", ErrorCategory::RequiresGradFlag},
    {"floating point", ErrorCategory::DType},  // "Only Tensors of floating point ... can require gradients"
    {"can't retain_grad on Tensor that has requires_grad=False", ErrorCategory::RetainGrad},
    {"Can't detach views in-place", ErrorCategory::DetachView},
    {"more than one element of the written-to tensor refers to a single memory location", ErrorCategory::Overlap},
    {"some elements of the input tensor and the written-to tensor refer to a single memory location", ErrorCategory::Overlap},
    {"view size is not compatible with input tensor's size and stride", ErrorCategory::ViewStride},
    {"Dimension out of range", ErrorCategory::IndexRange},
    {"out of range", ErrorCategory::IndexRange},
    {"dimension specified as 0 but tensor has no dimensions", ErrorCategory::IndexRange},
    {"Dimension specified as 0 but tensor has no dimensions", ErrorCategory::IndexRange},  // unbind
    {"expects at least a 1-dimensional tensor", ErrorCategory::Shape},                     // split, chunk
    {"cannot be applied to a 0-dim tensor", ErrorCategory::IndexRange},
    {"appears multiple times in the list of dims", ErrorCategory::IndexRange},
    {"repeated dim", ErrorCategory::IndexRange},
    {"duplicate dims", ErrorCategory::IndexRange},  // permute(): duplicate dims are not allowed.
    {"setStorage: sizes", ErrorCategory::StorageBounds},
    {"out of bounds for storage", ErrorCategory::StorageBounds},
    {"memory format", ErrorCategory::MemoryFormat},
    {"required rank 4 tensor to use channels_last format", ErrorCategory::MemoryFormat},
    {"required rank 5 tensor to use channels_last_3d format", ErrorCategory::MemoryFormat},
    {"can't be cast to the desired output type", ErrorCategory::DType},
    {"Found dtype ", ErrorCategory::DType},  // an out= of another dtype than a plain unary op computes in
    {"random_ expects 'from' to be less than 'to'", ErrorCategory::Argument},  // randint_like's high <= 0
    {"to - 1 is out of bounds for", ErrorCategory::Argument},                 // ... or past its dtype
    {"where expected condition to be a boolean tensor", ErrorCategory::DType},
    {"masked_fill_ only supports boolean masks", ErrorCategory::DType},
    {"masked_fill only supports boolean masks", ErrorCategory::DType},  // masked_fill__cuda's words
    {"tensors used as indices must be long,", ErrorCategory::DType},  // 2.x: "long, int, byte or bool tensors"
    {"One of the differentiated Tensors does not require grad", ErrorCategory::NoGradFn},
    {"of the input tensors does not require grad", ErrorCategory::NoGradFn},  // 2.x: "element 0 of the input ..."
    {"appears to not have been used in the graph", ErrorCategory::Argument},
    {"Index put requires the source and destination dtypes match", ErrorCategory::DType},
    {"does not match the shape of the indexed tensor", ErrorCategory::Shape},
    {"cannot be broadcast to indexing result of shape", ErrorCategory::Shape},
    {"too many indices for tensor of dimension", ErrorCategory::IndexRange},
    {"is out of bounds for dimension", ErrorCategory::IndexRange},
    {"Mask tensor can take 0 and 1 values only", ErrorCategory::Argument},
    {"is outside the representable range of", ErrorCategory::Argument},  // 2.x clamp of an integral tensor
    {"on a bool tensor is not supported", ErrorCategory::DType},
    {"with two bool tensors is not supported", ErrorCategory::DType},
    {"with a bool tensor is not supported", ErrorCategory::DType},
    {"Integers to negative integer powers are not allowed", ErrorCategory::DType},
    {"could not infer output dtype", ErrorCategory::DType},
    {"not implemented for 'Bool'", ErrorCategory::DType},
    {"not implemented for 'Long'", ErrorCategory::DType},
    {"not implemented for 'Int'", ErrorCategory::DType},
    {"not implemented for 'Half'", ErrorCategory::DType},
    {"not implemented for 'BFloat16'", ErrorCategory::DType},
    {"Boolean inputs not supported", ErrorCategory::DType},               // relu
    {"expected scalar type", ErrorCategory::DType},
    {"Autograd not support dtype", ErrorCategory::DType},                  // 2.x: history on a bool result                        // mm/matmul operands of two dtypes
    {"to have same dtype", ErrorCategory::DType},                          // dot
    {"have the same dtype", ErrorCategory::DType},  // 2.x: mm ("expected m1 and m2 to ..."), mv ("addmv input tensors must ...")
    {"must match the size of tensor", ErrorCategory::Shape},
    {"shapes cannot be multiplied", ErrorCategory::Shape},
    {"must be a matrix", ErrorCategory::Shape},
    {"need to be at least 1D", ErrorCategory::Shape},
    {"size mismatch", ErrorCategory::Shape},                               // mv
    {"vector + matrix @ vector expected", ErrorCategory::Shape},           // mv's operands
    {"Expected 1-D argument", ErrorCategory::Shape},                       // outer (mv's derivative)
    {"inconsistent tensor size", ErrorCategory::Shape},                    // dot
    {"to have the same number of elements", ErrorCategory::Shape},
    {"batch1 and batch2", ErrorCategory::Shape},
    {"Expected size for first two dimensions of batch2 tensor", ErrorCategory::Shape},
    {"expects a tensor with <= 2 dimensions", ErrorCategory::Shape},       // t()
    {"diagonal dimensions cannot be identical", ErrorCategory::Argument},
    {"chunk expects `chunks` to be greater than 0", ErrorCategory::Argument},
    {"split_size can only be 0 if dimension size is 0", ErrorCategory::Argument},
    {"split expects split_size be non-negative", ErrorCategory::Argument},
    {"split_with_sizes expects split_sizes", ErrorCategory::Argument},
    {"At least one of 'min' or 'max' must not be None", ErrorCategory::Argument},
    {"but must be > 0", ErrorCategory::Argument},                          // unfold step
    {"but must be >= 0", ErrorCategory::Argument},                         // 2.x: unfold size
    {"maximum size for tensor at dimension", ErrorCategory::Shape},        // unfold window past the end
    {"doesn't match the broadcast shape", ErrorCategory::Shape},
    {"is invalid for input of size", ErrorCategory::Shape},
    {"must match the existing size", ErrorCategory::Shape},
    {"the number of sizes provided", ErrorCategory::Shape},
    {"mismatch in length of strides and shape", ErrorCategory::Shape},
    {"number of dims don't match in permute", ErrorCategory::Shape},
    {"number of dimensions in the tensor input does not match", ErrorCategory::Shape},
    {"only one dimension can be inferred", ErrorCategory::Shape},
    {"shape '", ErrorCategory::Shape},
    {"start (", ErrorCategory::IndexRange},
    {"slice step must be positive", ErrorCategory::Argument},
    {"invalid shape dimension", ErrorCategory::Argument},
    {"isn't allowed in a leading, non-existing dimension", ErrorCategory::Shape},
    {"Storage size calculation overflowed", ErrorCategory::Argument},
    {"leaf variable has been moved into the graph interior", ErrorCategory::Argument},
    {"dependency not found for", ErrorCategory::Argument},  // the engine reaching a node its walk did not count
    {"maximum recursion depth exceeded", ErrorCategory::Argument},
    {"Trying to use a saved tensor that has been detached in-place", ErrorCategory::Argument},  // LibTorch 2.x  // deepcopy of a gradient cycle (RecursionError)
    {"cannot be converted to type", ErrorCategory::Argument},
    {"invalid storage offset", ErrorCategory::Argument},
    {"Negative strides are not supported", ErrorCategory::Argument},
    {"bound inconsistent with step sign", ErrorCategory::Argument},  // "larger bound" in 1.13, "lower bound" in 2.x
    {"integer multiplication overflow", ErrorCategory::Argument},  // sizes with a negative entry
    {"negative", ErrorCategory::Argument},
    {"Trying to create tensor with negative dimension", ErrorCategory::Argument},
};
}  // namespace

std::string_view to_string(ErrorCategory c) {
  for (const auto& n : kNames)
    if (n.category == c) return n.name;
  return "unclassified";
}

std::optional<ErrorCategory> parse_error_category(std::string_view s) {
  for (const auto& n : kNames)
    if (n.name == s) return n.category;
  return std::nullopt;
}

ErrorCategory classify_torch_message(std::string_view message) {
  for (const auto& [needle, category] : kRules)
    if (message.find(needle) != std::string_view::npos) return category;
  return ErrorCategory::Unclassified;
}

}  // namespace parity::judge
