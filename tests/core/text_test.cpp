#include <gtest/gtest.h>

#include "convtune/core/text.h"

namespace convtune::text_test {
namespace {

TEST(Text, TrimDropsBlanksAtBothEndsOnly) {
  EXPECT_EQ(trim("  K=64,\tC=3 \r\n"), "K=64,\tC=3");
  EXPECT_EQ(trim(" \t\r\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("a b"), "a b");
}

TEST(Text, UpperCapitalisesAsciiLetters) {
  EXPECT_EQ(upper("conv_k64_1x1"), "CONV_K64_1X1");
  EXPECT_EQ(upper(""), "");
}

}  // namespace
}  // namespace convtune::text_test
