// Dims: a tensor's sizes or strides. A vector of int64 that holds up to kInline dims in place, so that making a
// tensor (two of them per Layout, one per autograd input's metadata) does not go to the heap: for small ops,
// allocations were most of impl's time (perf: malloc and free a third of a one-element clone). It has the part
// of std::vector's interface impl uses, and converts to and from std::vector<int64_t> (the harness's type).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <vector>

namespace parity::impl {

class Dims {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_type kInline = 6;

  Dims() noexcept {}
  Dims(std::initializer_list<std::int64_t> v) { assign(v.begin(), v.end()); }
  explicit Dims(size_type n, std::int64_t value = 0) { assign(n, value); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  Dims(It first, It last) {
    assign(first, last);
  }
  Dims(const std::vector<std::int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, as the harness's
  Dims(const Dims& o) {
    // The common case as a fixed-size copy, a few moves: o's block holds at least kInline elements wherever it
    // is, and the ones past its size are never read.
    if (o.size_ > kInline) {
      assign(o.begin(), o.end());
      return;
    }
    std::memcpy(inline_, o.data_, sizeof inline_);
    size_ = o.size_;
  }
  Dims(Dims&& o) noexcept { take(o); }
  Dims& operator=(const Dims& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Dims& operator=(Dims&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Dims& operator=(std::initializer_list<std::int64_t> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~Dims() { release(); }

  operator std::vector<std::int64_t>() const { return std::vector<std::int64_t>(begin(), end()); }  // NOLINT

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  std::int64_t* data() noexcept { return data_; }
  const std::int64_t* data() const noexcept { return data_; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  std::int64_t& operator[](size_type i) noexcept { return data_[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data_[i]; }
  std::int64_t& front() noexcept { return data_[0]; }
  const std::int64_t& front() const noexcept { return data_[0]; }
  std::int64_t& back() noexcept { return data_[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data_[size_ - 1]; }

  void reserve(size_type n) {
    if (n <= capacity_) return;
    auto* fresh = static_cast<std::int64_t*>(::operator new(n * sizeof(std::int64_t)));
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(std::int64_t));
    if (data_ != inline_) ::operator delete(data_);
    data_ = fresh;
    capacity_ = n;
  }
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = v;
  }
  void pop_back() noexcept { --size_; }
  void resize(size_type n, std::int64_t value = 0) {
    reserve(n);
    for (size_type i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void assign(size_type n, std::int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <typename It>
  void assign(It first, It last) {
    const auto n = static_cast<size_type>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  iterator insert(const_iterator pos, std::int64_t v) { return insert(pos, &v, &v + 1); }
  iterator insert(const_iterator pos, size_type n, std::int64_t v) {
    const Dims copies(n, v);
    return insert(pos, copies.begin(), copies.end());
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    const Dims values(first, last);  // a copy: the range may lie in this very vector
    const auto at = static_cast<size_type>(pos - data_);
    const size_type n = values.size();
    reserve(size_ + n);
    std::memmove(data_ + at + n, data_ + at, (size_ - at) * sizeof(std::int64_t));
    std::copy(values.begin(), values.end(), data_ + at);
    size_ += n;
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<std::int64_t> v) { return insert(pos, v.begin(), v.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const auto at = static_cast<size_type>(first - data_), n = static_cast<size_type>(last - first);
    std::memmove(data_ + at, data_ + at + n, (size_ - at - n) * sizeof(std::int64_t));
    size_ -= n;
    return data_ + at;
  }
  void swap(Dims& o) noexcept {
    Dims t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Dims& a, const Dims& b) noexcept { return !(a == b); }
  friend bool operator<(const Dims& a, const Dims& b) noexcept {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Dims& a, const std::vector<std::int64_t>& b) noexcept {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<std::int64_t>& a, const Dims& b) noexcept { return b == a; }
  friend bool operator!=(const Dims& a, const std::vector<std::int64_t>& b) noexcept { return !(a == b); }
  friend bool operator!=(const std::vector<std::int64_t>& a, const Dims& b) noexcept { return !(b == a); }

 private:
  void release() noexcept {
    if (data_ != inline_) ::operator delete(data_);
    data_ = inline_;
    capacity_ = kInline;
    size_ = 0;
  }
  // Takes o's elements (its heap block, or a copy of its inline ones) and leaves o empty.
  void take(Dims& o) noexcept {
    if (o.data_ == o.inline_) {
      std::memcpy(inline_, o.inline_, sizeof inline_);  // whole: a few moves rather than a call
      data_ = inline_;
      capacity_ = kInline;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
    }
    size_ = o.size_;
    o.data_ = o.inline_;
    o.capacity_ = kInline;
    o.size_ = 0;
  }

  std::int64_t* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = kInline;
  std::int64_t inline_[kInline];
};

}  // namespace parity::impl
