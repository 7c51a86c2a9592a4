// The one op table. Each entry drives generation (arity, attributes, shape rule, weight), both backends'
// execution (by OpId), the JSON name and the C++/Python repro printers (templates).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "program/types.h"

namespace parity::program {

#define PARITY_OPS(X)                                                                  \
  /* factories */                                                                      \
  X(Rand) X(Zeros) X(Ones) X(Full) X(Arange) X(Empty)                                  \
  X(EmptyLike) X(ZerosLike)                                                            \
  /* copies */                                                                         \
  X(Clone) X(Contiguous) X(Detach) X(Detach_) X(Copy_) X(Data) X(To) X(NewTensor)      \
  X(Deepcopy)                                                                          \
  /* views */                                                                          \
  X(View) X(Reshape) X(Transpose) X(Permute) X(Slice) X(Select) X(Narrow) X(Expand)    \
  X(Squeeze) X(SqueezeDim) X(Unsqueeze) X(AsStrided) X(Diagonal) X(T) X(Unfold)        \
  /* multi-output views: the step keeps output `index` */                              \
  X(Unbind) X(Split) X(Chunk)                                                          \
  /* arithmetic */                                                                     \
  X(Add) X(Sub) X(Mul) X(Div) X(AddScalar) X(SubScalar) X(MulScalar) X(DivScalar)      \
  X(Neg) X(Pow) X(Exp) X(Sigmoid) X(Tanh) X(Relu) X(Abs) X(Clamp) X(Mm) X(Matmul)     \
  X(Sum) X(SumDims) X(Mean) X(MeanDims)                                                \
  /* in place */                                                                       \
  X(Add_) X(Sub_) X(Mul_) X(Div_) X(AddScalar_) X(SubScalar_) X(MulScalar_)            \
  X(DivScalar_) X(Zero_) X(Fill_) X(Exp_) X(Sigmoid_) X(Tanh_) X(Relu_) X(Abs_)        \
  X(Clamp_)                                                                            \
  /* autograd */                                                                       \
  X(Backward) X(BackwardGrad) X(RetainGrad) X(RequiresGrad_)

enum class OpId : std::uint8_t {
#define PARITY_ENUM(name) name,
  PARITY_OPS(PARITY_ENUM)
#undef PARITY_ENUM
};

// An attribute names a field of Attrs and, for sizes, the rule the generator follows to pick it.
enum class Attr : std::uint8_t {
  Sizes,        // fresh shape (factories)
  ViewSizes,    // same number of elements as operand 0 (view, reshape); one entry may be -1
  ExpandSizes,  // broadcast-compatible with operand 0
  Strided,      // sizes + strides + offset of a fresh storage (rand) or within operand 0's storage (as_strided)
  Dims,         // permutation (permute) or subset (reductions) of operand 0's dims
  Dim, Dim1, Start, End, Step, Index, Length,
  Scalar, MemoryFormat, DType, RequiresGrad, Keepdim, RetainGraph, Seed,
  Offset,       // diagonal's offset (Attrs::offset)
  Min, Max,     // clamp bounds, each optional
  Size,         // unfold window, split size
  Chunks, Copy, Memo
};

enum class OpKind : std::uint8_t { Factory, Copy, View, Arithmetic, Reduction, InPlace, Autograd };

enum OpFlag : unsigned {
  kNone = 0,
  kMutates = 1u << 0,          // writes operand 0 (or its autograd state): every live value is observed after it
  kValuesUndefined = 1u << 1,  // contents are uninitialised memory: values are not compared
  kNoValue = 1u << 2,          // returns nothing
  kBackward = 1u << 3,         // runs the engine: gradients of every live value are observed
};

// What the generator knows of a value: enough to pick well-typed operands and attributes.
struct Meta {
  std::vector<std::int64_t> sizes;
  DType dtype = DType::Float32;
  bool requires_grad = false;
  std::int64_t numel() const;
};

struct Attrs;

struct OpSpec {
  OpId id;
  std::string_view name;  // JSON name
  OpKind kind;
  int arity;               // tensor operands
  std::vector<Attr> attrs;  // attributes read (and serialised), in printing order
  unsigned flags;
  int weight;               // relative generation weight
  std::string_view cpp;     // repro template: {0},{1} operands; {sizes},{dim},... attributes
  std::string_view py;
  // Shape/dtype rule used by the generator: nullopt when the step is expected to raise.
  std::optional<Meta> (*infer)(std::span<const Meta>, const Attrs&);
};

const std::vector<OpSpec>& op_table();
const OpSpec& spec(OpId);
std::optional<OpId> find_op(std::string_view name);
std::string_view attr_name(Attr);

// PyTorch's type promotion, shared by shape rules (impl and LibTorch implement their own).
DType promote(DType a, DType b);

}  // namespace parity::program
