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

// Issue 60: user input in a message is valid UTF-8 on one line, whatever was typed.
TEST(Text, EscapeKeepsUtf8AndEscapesEveryOtherByte) {
  EXPECT_EQ(escape_text("resnet18-12"), "resnet18-12");
  EXPECT_EQ(escape_text("r\xFF"), "r\\xFF");
  EXPECT_EQ(escape_text("\xEF\xBC\xB4(2,w)"), "\xEF\xBC\xB4(2,w)");  // a full-width T, whole
  EXPECT_EQ(escape_text("\xEF\xBC"), "\\xEF\\xBC");                    // the same cut in half
  EXPECT_EQ(escape_text("a\nb\tc\x01\x7F"), "a\\nb\\tc\\x01\\x7F");
  EXPECT_EQ(escape_text("\xC0\xAF\xED\xA0\x80"), "\\xC0\\xAF\\xED\\xA0\\x80");  // overlong, a surrogate
  EXPECT_EQ(escape_text("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(quote_text("r\xFF"), "'r\\xFF'");
  EXPECT_EQ(utf8_length("\xEF\xBC\xB4", 0), 3u);
  EXPECT_EQ(utf8_length("\xBC", 0), 0u);
  EXPECT_EQ(utf8_length("a", 1), 0u);
}

}  // namespace
}  // namespace convtune::text_test
