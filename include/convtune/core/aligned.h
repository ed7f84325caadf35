#pragma once
// Float buffers that start on a 64-byte cache line, as oneDNN's and
// PyTorch's allocators give them. A kernel's 64-byte vector stores into a
// buffer that is only 16-byte aligned (malloc's) each straddle two lines:
// a store-bound kernel (yolo9000-0's, a 38 MB output) runs about a fifth
// slower so, a handicap against oneDNN, which aligns its own. The bench and the
// tuner's driver (microkernels/driver.c) give every kernel aligned buffers,
// the input and residual too (runner.h ProblemData).
#include <cstddef>
#include <new>
#include <vector>

namespace convtune {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};

using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

}  // namespace convtune
