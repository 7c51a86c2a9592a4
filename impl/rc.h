// Rc<T>: shared ownership whose counts are plain integers, not atomics (Rust's Rc, where std::shared_ptr is its
// Arc), with WeakRc, make_rc and EnableRcFromThis beside it. They are libstdc++'s own shared_ptr machinery under its
// single-threaded lock policy (std::__shared_ptr<T, _S_single>): the same implementation as std::shared_ptr
// (polymorphic conversions, weak references, one allocation from make_rc), only the counting differs.
//
// Why: making or dropping a tensor copies or releases its storage, version counter, autograd node and edges; with
// atomic counts those locked instructions were most of a detach and a third of a small op's time (perf: `lock add`
// and `lock xadd` in Tensor::alias, clone, make_node and the nodes' destructors). impl's objects never cross threads:
// impl keeps its grad mode, sequence numbers and small-block cache per thread, and parity's parallelism is
// processes. Handing a tensor (or anything holding an Rc) to another thread while this one still refers to it is a
// data race; LibTorch's atomic counts exist for tensors that do cross threads, which impl does not model.
#pragma once
#include <memory>
#include <utility>

#include "impl/block_cache.h"

#if !defined(__GLIBCXX__)
#error "impl/rc.h uses libstdc++'s std::__shared_ptr with the _S_single lock policy"
#endif

namespace parity::impl {

template <typename T>
using Rc = std::__shared_ptr<T, __gnu_cxx::_S_single>;
template <typename T>
using WeakRc = std::__weak_ptr<T, __gnu_cxx::_S_single>;
template <typename T>
using EnableRcFromThis = std::__enable_shared_from_this<T, __gnu_cxx::_S_single>;

// One allocation for the object and its counts, from the per-thread cache of small blocks.
template <typename T, typename... Args>
Rc<T> make_rc(Args&&... args) {
  return std::__allocate_shared<T, __gnu_cxx::_S_single>(CachedAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace parity::impl
