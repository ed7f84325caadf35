#include "convtune/core/aligned.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace convtune::aligned_test {
namespace {

// Every size starts on a 64-byte line, also after growing (a copy).
TEST(AlignedFloats, StartOnACacheLine) {
  for (size_t n : {size_t(1), size_t(3), size_t(17), size_t(1000), size_t(1) << 20}) {
    AlignedFloats a(n, 1.f);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u) << n;
    a.resize(3 * n + 5);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 64, 0u) << n;
    EXPECT_EQ(a[n - 1], 1.f);
  }
}

}  // namespace
}  // namespace convtune::aligned_test
