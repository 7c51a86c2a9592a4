// Rc<T>: shared ownership of one T by handles that stay on one thread (Rust's Rc, where std::shared_ptr is its
// Arc): the count is a plain integer, not an atomic.
//
// Why not shared_ptr: a storage and a version counter are shared by every tensor over them, so making or dropping
// any tensor (a detach, a view, each step's result) copies or releases both. With atomic counts those four locked
// instructions were most of a detach (perf: `lock add` in Tensor::alias and ~TensorImpl). impl's tensors never
// cross threads: impl keeps its grad mode, sequence numbers and small-block cache per thread, and parity's
// parallelism is processes. Handing an Rc (or a tensor holding one) to another thread while this one still holds a
// handle is a data race; LibTorch's atomic counts exist for tensors that do cross threads, which impl does not model.
#pragma once
#include <utility>

namespace parity::impl {

template <typename T>
class Rc {
 public:
  Rc() noexcept = default;
  template <typename... Args>
  static Rc make(Args&&... args) {
    return Rc(new Box{1, T(std::forward<Args>(args)...)});
  }
  Rc(const Rc& o) noexcept : box_(o.box_) {
    if (box_) ++box_->count;
  }
  Rc(Rc&& o) noexcept : box_(std::exchange(o.box_, nullptr)) {}
  // The new value's count goes up before the old one's goes down: assigning a handle its own value keeps it.
  Rc& operator=(const Rc& o) noexcept {
    if (o.box_) ++o.box_->count;
    release();
    box_ = o.box_;
    return *this;
  }
  Rc& operator=(Rc&& o) noexcept {
    if (this != &o) {
      release();
      box_ = std::exchange(o.box_, nullptr);
    }
    return *this;
  }
  ~Rc() { release(); }
  void swap(Rc& o) noexcept { std::swap(box_, o.box_); }

  T* get() const noexcept { return box_ ? &box_->value : nullptr; }
  T& operator*() const noexcept { return box_->value; }
  T* operator->() const noexcept { return &box_->value; }
  explicit operator bool() const noexcept { return box_ != nullptr; }
  long use_count() const noexcept { return box_ ? box_->count : 0; }
  // The same T, not equal ones.
  bool operator==(const Rc& o) const noexcept { return box_ == o.box_; }

 private:
  struct Box {
    long count;
    T value;
  };
  explicit Rc(Box* box) noexcept : box_(box) {}
  void release() noexcept {
    if (box_ && --box_->count == 0) delete box_;
  }
  Box* box_ = nullptr;
};

}  // namespace parity::impl
