// Matrix products: mm, and matmul composed exactly as LibTorch 1.13's at::native::_matmul_impl composes it
// (matmul has no node of its own, so its graph is the graph of the ops it calls: dot, mv, mm, bmm,
// _unsafe_view, squeeze_, and the views and copies around them).
#include <array>
#include <functional>
#include <string>

#include "impl/autograd/grad_mode.h"
#include "impl/autograd/meta.h"
#include "impl/error.h"
#include "impl/ops.h"
#include "impl/ops/iteration.h"
#include "impl/ops/node_builder.h"
#include "impl/version_gate.h"

namespace parity::impl {

using autograd::Derivative;
using autograd::Formula;
using autograd::TensorList;
using ops::make_node;

namespace {

std::int64_t product_of(const Dims& d) {
  std::int64_t n = 1;
  for (auto s : d) n *= s;
  return n;
}

// The same memory seen with another geometry, unknown to autograd: how the kernel sees vectors as matrices.
Tensor reinterpret(const Tensor& t, const Dims& sizes, const Dims& strides) {
  return autograd::make_alias(t, Layout{sizes, strides, t.offset()});
}

// ATen's CPU product kernels: an empty result is left alone and an empty inner dimension gives zeros before
// the kernel dispatches on one operand's dtype (raising "not implemented for 'Bool'") and reads the other
// operand as that dtype. Every element of `out` is written (its callers allocate it uninitialised).
// The products' kernels: ATen's CPU ones leave out Bool (and, in 1.13, Half); cuBLAS's take no integers.
constexpr ops::DTypeSet kCpuProductsMissing = {ScalarType::Bool, ScalarType::Float16};
constexpr ops::DTypeSet kCudaProductsMissing = {ScalarType::Bool, ScalarType::Int32, ScalarType::Int64};
constexpr ops::KernelDispatch kMmKernel = {"addmm_impl_cpu_", kCpuProductsMissing, "addmm_cuda", kCudaProductsMissing};
constexpr ops::KernelDispatch kSmallBmmKernel = {"bmm", kCpuProductsMissing, "baddbmm_cuda", kCudaProductsMissing};
constexpr ops::KernelDispatch kLargeBmmKernel = {"addmm_impl_cpu_", kCpuProductsMissing, "baddbmm_cuda",
                                                 kCudaProductsMissing};
constexpr ops::KernelDispatch kMvKernel = {"addmv_impl_cpu", kCpuProductsMissing, "addmv_impl_cuda",
                                           kCudaProductsMissing};
constexpr ops::KernelDispatch kDotKernel = {"dot", kCpuProductsMissing, "dot", kCudaProductsMissing};

void product_values(const Tensor& out, const Tensor& a, const Tensor& b, std::int64_t inner,
                    const ops::KernelDispatch& kernel, ScalarType dispatched, ScalarType other) {
  const ops::ProductKernel sums = &kernel == &kSmallBmmKernel ? ops::ProductKernel::Loop : ops::ProductKernel::Blas;
  if (out.numel() == 0) return;
  if (inner == 0) {
    ops::fill_kernel(out, 0);
    return;
  }
  ops::check_dispatch(out.device(), kernel, dispatched);
  PARITY_CHECK(other == dispatched, ErrorKind::DType,
               "expected scalar type " + std::string(type_name(dispatched)) + " but found " +
                   std::string(type_name(other)));
  ops::matmul_kernel(out, a, b, sums);
}

using ProductDerivative = std::function<Tensor(const Tensor& grad, const Tensor& other)>;

// Which input's gradient a generated node computes first: they go in the alphabetical order of the inputs'
// names (load_derivatives.py sorts them): mm and bmm's mat2 before self, mv's self before vec, dot's self before
// tensor. Under create_graph that order numbers the nodes the formulas make.
enum class Compute { FirstOperandFirst, SecondOperandFirst };

// The node of a product of a and b: a's derivative reads b and b's reads a, so each operand is saved only
// when the other's gradient is needed (derivatives.yaml).
// `names`: a's and b's names in derivatives.yaml. They are saved in the table's order, which is the order the
// node unpacks them in, and so decides which one a version error names when both are stale: PyTorch's MmBackward0
// and BmmBackward0 unpack self first, DotBackward0 and MvBackward0 their second operand.
Rc<Formula> product_node(Derivative d, std::array<const char*, 2> names, Compute compute, const Tensor& a,
                         const Tensor& b, ProductDerivative da, ProductDerivative db) {
  const std::size_t a_slot = autograd::saved_position(d, names[0]), b_slot = autograd::saved_position(d, names[1]);
  auto node = make_node(d, {&a, &b}, [=](const Tensor& g, const TensorList& s, const Formula& n) {
    TensorList out(2);
    auto first = [&] {
      if (n.task_should_compute_output(0)) out[0] = da(g, s[b_slot]);
    };
    auto second = [&] {
      if (n.task_should_compute_output(1)) out[1] = db(g, s[a_slot]);
    };
    if (compute == Compute::FirstOperandFirst) first(), second();
    else second(), first();
    return out;
  });
  const Tensor saved_a = node->should_compute_output(1) ? a : Tensor();
  const Tensor saved_b = node->should_compute_output(0) ? b : Tensor();
  if (a_slot == 0) {
    node->save(names[0], saved_a);
    node->save(names[1], saved_b);
  } else {
    node->save(names[1], saved_b);
    node->save(names[0], saved_a);
  }
  return node;
}

Tensor with_history(const Tensor& out, const Rc<Formula>& node) {
  if (node) autograd::set_history(out, node);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  auto times = [](const Tensor& g, const Tensor& other) { return mul(g, other); };  // grad * other.conj()
  auto node = autograd::compute_requires_grad({&a, &b})
                  ? product_node(Derivative::DotBackward0, {"self", "tensor"}, Compute::FirstOperandFirst, a, b, times, times)
                  : nullptr;
  // The device wrapper's check comes before the op's own.
  const Device device = ops::wrapper_device("_dot", {{"self", &a}, {"tensor", &b}});
  PARITY_CHECK(a.dtype() == b.dtype(), ErrorKind::DType,
               "dot : expected both vectors to have same dtype, but found " + std::string(type_name(a.dtype())) +
                   " and " + std::string(type_name(b.dtype())));
  const std::int64_t n = a.numel(), m = b.numel();
  PARITY_CHECK(n == m, ErrorKind::Shape,
               "inconsistent tensor size, expected tensor [" + std::to_string(n) + "] and src [" + std::to_string(m) +
                   "] to have the same number of elements, but got " + std::to_string(n) + " and " +
                   std::to_string(m) + " elements respectively");
  ops::check_dispatch(device, kDotKernel, a.dtype());
  Tensor out = Tensor::allocate(Layout{}, a.dtype(), device);
  ops::matmul_kernel(reinterpret(out, {1, 1}, {1, 1}), reinterpret(a, {1, n}, {0, a.strides()[0]}),
                     reinterpret(b, {n, 1}, {b.strides()[0], 0}), ops::ProductKernel::Blas);
  return with_history(out, node);
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  auto node = autograd::compute_requires_grad({&mat, &vec})
                  ? product_node(
                        Derivative::MvBackward0, {"self", "vec"}, Compute::FirstOperandFirst, mat, vec,
                        // grad.ger(vec), which 1.13 computes as outer: grad.reshape({n, 1}) * vec, after checking
                        // both are vectors (the saved vec may no longer be one: set_data).
                        [](const Tensor& g, const Tensor& v) {
                          PARITY_CHECK(v.dim() == 1, ErrorKind::Shape,
                                       "outer: Expected 1-D argument vec2, but got " + std::to_string(v.dim()) + "-D");
                          return mul(reshape(g, {g.numel(), 1}), v);
                        },
                        [](const Tensor& g, const Tensor& m) { return mv(t(m), g); })
                  : nullptr;
  // at::mv allocates its result with vec's options, then runs addmv_ into it: the wrapper of addmv_ checks
  // (self: the result, mat, vec).
  const Device device = ops::wrapper_device("addmv_", {{"self", &vec}, {"mat", &mat}, {"vec", &vec}});
  // at::mv sizes its result by mat.size(0), then addmv_ checks the operands (only a backward formula can pass
  // others than matmul's: a saved operand that set_data changed).
  PARITY_CHECK_AS(mat.dim() > 0, ErrorKind::IndexRange, IndexError, "Dimension specified as 0 but tensor has no dimensions");
  PARITY_CHECK(mat.dim() == 2 && vec.dim() == 1, ErrorKind::Shape,
               "vector + matrix @ vector expected, got 1, " + std::to_string(mat.dim()) + ", " + std::to_string(vec.dim()));
  const std::int64_t rows = mat.sizes()[0], inner = mat.sizes()[1];
  PARITY_CHECK(inner == vec.sizes()[0], ErrorKind::Shape,
               follows(VersionGate::MvNamesOperandSizes) ? "size mismatch, got input (" + std::to_string(rows) + "), mat (" + std::to_string(rows) +
                                   "x" + std::to_string(inner) + "), vec (" + std::to_string(vec.sizes()[0]) + ")"
                             : "size mismatch, got " + std::to_string(rows) + ", " + std::to_string(rows) + "x" +
                                   std::to_string(inner) + "," + std::to_string(vec.sizes()[0]));
  // addmv's operands: the result (of vec's dtype), the matrix and the vector.
  if (follows(VersionGate::MvChecksDtypes))
    PARITY_CHECK(mat.dtype() == vec.dtype(), ErrorKind::DType,
                 "addmv input tensors must have the same dtype, but got " + std::string(type_name(vec.dtype())) +
                     ", " + std::string(type_name(mat.dtype())) + ", and " + std::string(type_name(vec.dtype())));
  // mv writes into a result of vec's dtype through addmv_, which dispatches on the matrix's.
  Tensor out = Tensor::allocate_uninitialized(Layout::dense({rows}), vec.dtype(), device);
  product_values(reinterpret(out, {rows, 1}, {1, 0}), mat, reinterpret(vec, {inner, 1}, {vec.strides()[0], 0}),
                 inner, kMvKernel, mat.dtype(), vec.dtype());
  return with_history(out, node);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  auto node = autograd::compute_requires_grad({&a, &b})
                  ? product_node(Derivative::BmmBackward0, {"self", "mat2"}, Compute::SecondOperandFirst, a, b,
                                 [](const Tensor& g, const Tensor& other) { return bmm(g, transpose(other, 1, 2)); },
                                 [](const Tensor& g, const Tensor& other) { return bmm(transpose(other, 1, 2), g); })
                  : nullptr;
  const Device device = ops::wrapper_device("bmm", {{"self", &a}, {"mat2", &b}});
  const std::int64_t batches = a.sizes()[0], rows = a.sizes()[1], inner = a.sizes()[2], cols = b.sizes()[2];
  PARITY_CHECK(b.sizes()[0] == batches && b.sizes()[1] == inner, ErrorKind::Shape,
               "Expected size for first two dimensions of batch2 tensor to be: [" + std::to_string(batches) + ", " +
                   std::to_string(inner) + "] but got: [" + std::to_string(b.sizes()[0]) + ", " +
                   std::to_string(b.sizes()[1]) + "].");
  Tensor out = Tensor::allocate_uninitialized(Layout::dense({batches, rows, cols}), b.dtype(), device);
  // ATen's bmm loops itself over small products (dispatching on a's dtype) and calls addmm per batch on larger
  // ones (dispatching on the result's, which is b's).
  const bool small = inner * rows * cols < 400;
  product_values(out, a, b, inner, small ? kSmallBmmKernel : kLargeBmmKernel, small ? a.dtype() : b.dtype(),
                 small ? b.dtype() : a.dtype());
  return with_history(out, node);
}

// at::_unsafe_view of a fresh contiguous product: the same memory reshaped, not a view for autograd.
Tensor unsafe_view(const Tensor& x, const Dims& sizes) {
  Dims in = x.sizes();
  auto node = autograd::compute_requires_grad({&x})
                  ? make_node(Derivative::UnsafeViewBackward0, {&x}, [in](const Tensor& g, const TensorList&, const Formula&) {
                      return TensorList{reshape(g, in)};
                    })
                  : nullptr;
  Layout layout = Layout::dense(sizes);
  layout.offset = x.offset();
  return with_history(autograd::make_alias(x, layout), node);
}

// x.squeeze_(dim) (SqueezeBackward3) on matmul's fresh mm result, which is no view: only x's own geometry
// changes, and like every in-place op it bumps the version, with or without grad.
Tensor squeeze_in_place(const Tensor& x, std::int64_t dim) {
  bool rg = autograd::compute_requires_grad({&x});
  autograd::check_inplace(x, rg);
  Dims in = x.sizes();
  // squeeze_.dim's node: 2.x's derivatives.yaml lists squeeze.dims before it, which renumbers it.
  auto node = rg ? make_node(follows(VersionGate::SqueezeInPlaceDimIsBackward4) ? Derivative::SqueezeBackward4 : Derivative::SqueezeBackward3, {&x}, [in, dim](const Tensor& g, const TensorList&, const Formula&) {
                     std::int64_t d = wrap_dim(dim, static_cast<std::int64_t>(in.size()));
                     return TensorList{(!in.empty() && in[d] == 1) ? unsqueeze(g, d) : g};
                   })
                 : nullptr;
  x.restride(geometry::squeeze(x.layout(), dim));
  x.bump_version();
  if (node) autograd::rebase_history(x, node);
  return x;
}

// 1.13's should_fold(tensor1, dim_tensor2): a batch (>= 3-d) times a matrix or vector runs as one mm or mv
// over the batch folded into rows, except for a 3-d batch of transposed matrices (e.g. permute(0, 2, 1)),
// which folding would have to copy and bmm takes as it is.
bool should_fold(const Tensor& t1, std::int64_t dim2) {
  if (!(t1.dim() >= 3 && (dim2 == 1 || dim2 == 2))) return false;
  const Dims& s = t1.sizes();
  const Dims& st = t1.strides();
  return !(t1.dim() == 3 && dim2 == 2 && st.back() != 1 && st.front() == s[1] * s[2]);
}

// The larger operand's batch folded into its rows. matrix-or-vector @ batch runs transposed, as
// (batch^T @ operand^T)^T, and a transposed matrix result is copied back to contiguous.
Tensor folded_matmul(const Tensor& a, const Tensor& b) {
  const bool transposed = b.dim() > a.dim();
  const Tensor t1 = transposed ? transpose(b, -2, -1) : a;
  const Tensor t2 = !transposed ? b : a.dim() == 2 ? t(a) : a;
  const Dims& sizes1 = t1.sizes();
  Dims output_shape(sizes1.begin(), sizes1.end() - 1);
  // reshape to (rows, n) rather than view(-1, n): with n == 0 the -1 would be ambiguous.
  const Tensor t1_folded = reshape(t1, {product_of(output_shape), sizes1.back()});
  if (t2.dim() == 1) return unsafe_view(mv(t1_folded, t2), output_shape);
  output_shape.push_back(t2.sizes()[1]);
  Tensor output = unsafe_view(mm(t1_folded, t2), output_shape);
  return transposed ? contiguous(transpose(output, -2, -1)) : output;
}

// 2.x's should_fold(tensor1, tensor2): the larger operand t1 (b transposed when b is larger) is >= 3-d and the
// other at most a matrix, and either the smaller requires grad (folding keeps its gradient small, even at the
// cost of a copy), or, unless a is a matrix (whose fold would need a copy of the transposed result), t1 is empty
// or its leading dims fold into rows without a copy: stride by stride before 2.12, then as a view, so that a
// size-1 dim's stride does not matter (2.15 folds a (1, 2, 3) batch with strides (99, 3, 1); 2.11 does not).
// b.mT() is a real op, made before any size is compared: a larger b whose view history is stale (written
// through its base after a no_grad or multi-output view) raises there, before the batch sizes or a are read.
bool should_fold_by_strides(const Tensor& a, const Tensor& b) {
  const bool a_larger = a.dim() >= b.dim();
  const Tensor t1 = a_larger ? a : transpose(b, -2, -1);
  const Tensor& smaller = a_larger ? b : a;
  if (!(t1.dim() >= 3 && smaller.dim() <= 2)) return false;
  if (autograd::requires_grad(smaller)) return true;
  if (a.dim() == 2) return false;
  if (t1.numel() == 0) return true;
  const Layout& folded = t1.layout();
  if (!follows(VersionGate::MatmulFoldViewsLeadingDims)) {
    // Each leading dim's stride must be the next one's extent, size-1 dims included.
    for (std::size_t i = 0; i + 2 < folded.sizes.size(); ++i)
      if (folded.strides[i] != folded.strides[i + 1] * folded.sizes[i + 1]) return false;
    return true;
  }
  const std::int64_t last = folded.sizes.back();
  return view_strides(folded, {folded.numel() / last, last}).has_value();
}

// Broadcast the batch dims, flatten them into one, bmm, and reshape the result back. In 1.13 both operands are
// at least matrices here (a vector always folds); 2.x also comes here with a vector, which takes one row (a) or
// one column (b), and first drops a 3-d operand's batch of 1 that requires grad when the batches differ.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  const Dims& sa = a.sizes();
  const Dims& sb = b.sizes();
  const std::int64_t da = a.dim(), db = b.dim();
  const std::int64_t n = da > 1 ? sa.end()[-2] : 1, m1 = sa.back();
  const std::int64_t m2 = db > 1 ? sb.end()[-2] : sb.front(), p = db > 1 ? sb.back() : 1;
  const Dims batch_a(sa.begin(), sa.end() - std::min<std::int64_t>(da, 2));
  const Dims batch_b(sb.begin(), sb.end() - std::min<std::int64_t>(db, 2));
  if (follows(VersionGate::MatmulFoldsByStrides) && da == 3 && db == 3 && batch_a[0] != batch_b[0]) {
    if (batch_a[0] == 1 && autograd::requires_grad(a)) return matmul(squeeze(a, 0), b);
    if (batch_b[0] == 1 && autograd::requires_grad(b)) return matmul(a, squeeze(b, 0));
  }
  Dims output_shape = broadcast_shapes(batch_a, batch_b);
  const std::int64_t batch = product_of(output_shape);
  auto with = [&output_shape](std::initializer_list<std::int64_t> tail) {
    Dims d = output_shape;
    d.insert(d.end(), tail);
    return d;
  };
  const Tensor a3 = reshape(expand(a, with({n, m1})), {batch, n, m1});
  const Tensor b3 = db == 1 ? unsqueeze(reshape(expand(b, with({m2})), {batch, m2}), 2)
                            : reshape(expand(b, with({m2, p})), {batch, m2, p});
  if (da > 1) output_shape.push_back(n);
  if (db > 1) output_shape.push_back(p);
  const Tensor product = bmm(a3, b3);
  return unsafe_view(db == 1 ? squeeze(product, -1) : product, output_shape);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  Rc<Formula> node;
  if (autograd::compute_requires_grad({&a, &b})) {
    // mm_mat1_backward / mm_mat2_backward: an operand that was column-major gets its gradient column-major. They
    // transpose with t(), which a create_graph backward records (TBackward0).
    auto column_major = [](const Tensor& t) {
      return t.dim() == 2 && t.strides()[0] == 1 && t.strides()[1] == t.sizes()[0];
    };
    const bool a_cols = column_major(a), b_cols = column_major(b);
    node = product_node(
        Derivative::MmBackward0, {"self", "mat2"}, Compute::SecondOperandFirst, a, b,
        [a_cols](const Tensor& g, const Tensor& mat2) {
          return a_cols ? t(mm(mat2, t(g))) : mm(g, t(mat2));
        },
        [b_cols](const Tensor& g, const Tensor& mat1) {
          return b_cols ? t(mm(t(g), mat1)) : mm(t(mat1), g);
        });
  }
  // 2.x's mm compares the dtypes before the kernel reads either (MmChecksDtypes), and later releases say which
  // function refuses (MmNamesItself).
  const Device device = ops::wrapper_device("mm", {{"self", &a}, {"mat2", &b}});
  const bool names_itself = follows(VersionGate::MmNamesItself);
  const std::string prefix = names_itself ? "mm: " : "";
  PARITY_CHECK(a.dim() == 2, ErrorKind::Shape,
               prefix + "self must be a matrix" +
                   (names_itself ? ", got " + std::to_string(a.dim()) + "-D tensor" : std::string()));
  PARITY_CHECK(b.dim() == 2, ErrorKind::Shape,
               prefix + "mat2 must be a matrix" +
                   (names_itself ? ", got " + std::to_string(b.dim()) + "-D tensor" : std::string()));
  const std::int64_t rows = a.sizes()[0], inner = a.sizes()[1], cols = b.sizes()[1];
  PARITY_CHECK(inner == b.sizes()[0], ErrorKind::Shape,
               prefix + "mat1 and mat2 shapes cannot be multiplied (" + std::to_string(rows) + "x" +
                   std::to_string(inner) + " and " + std::to_string(b.sizes()[0]) + "x" + std::to_string(cols) + ")");
  if (follows(VersionGate::MmChecksDtypes))
    PARITY_CHECK(a.dtype() == b.dtype(), ErrorKind::DType,
                 "expected m1 and m2 to have the same dtype, but got: " + std::string(type_meta_name(a.dtype())) +
                     " != " + std::string(type_meta_name(b.dtype())));
  Tensor out = Tensor::allocate_uninitialized(Layout::dense({rows, cols}), a.dtype(), device);
  product_values(out, a, b, inner, kMmKernel, a.dtype(), b.dtype());
  return with_history(out, node);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const std::int64_t da = a.dim(), db = b.dim();
  PARITY_CHECK(da != 0 && db != 0, ErrorKind::Shape,
               "both arguments to matmul need to be at least 1D, but they are " + std::to_string(da) + "D and " +
                   std::to_string(db) + "D");
  if (da == 1 && db == 1) return dot(a, b);
  if (da == 2 && db == 1) return mv(a, b);
  if (da == 1 && db == 2) return squeeze_in_place(mm(unsqueeze(a, 0), b), 0);
  if (da == 2 && db == 2) return mm(a, b);
  const bool fold = follows(VersionGate::MatmulFoldsByStrides) ? should_fold_by_strides(a, b)
                                                                : should_fold(a, db) || should_fold(b, da);
  return fold ? folded_matmul(a, b) : batched_matmul(a, b);
}

}  // namespace parity::impl
