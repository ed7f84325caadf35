// The configuration language (000 §3.3): dimensions, text form, parser errors
// and every validation rule.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "convtune/space/config.h"
#include "convtune/core/error.h"
#include "convtune/core/shape.h"
#include "test_util.h"

namespace convtune::config_test {
namespace {

using test::error_of;

// 000 §4.2's full completion for Yolo9000-12 (h is the output height, 34).
const char* const kPaper =
    "[T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(256,c), U(a,h), "
    "U(2,k), V(k)]";

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_config(text); });
}

// Validation message for a configuration on yolo9000-12 with 16 lanes.
std::string check(const std::string& text, const std::string& layer = "yolo9000-12",
                  int64_t lanes = 16) {
  Config c = parse_config(text);
  return error_of([&] { validate_config(c, zoo_layer(layer), lanes); });
}

TEST(Dim, CharsAndSizes) {
  const std::string chars = "nkchwrsg";
  for (int i = 0; i < kNumDims; ++i) {
    Dim d = static_cast<Dim>(i);
    EXPECT_EQ(dim_char(d), chars[i]);
    Dim back = Dim::n;
    ASSERT_TRUE(dim_from_char(chars[i], &back));
    EXPECT_EQ(back, d);
  }
  Dim d;
  EXPECT_FALSE(dim_from_char('x', &d));
  EXPECT_FALSE(dim_from_char('K', &d));

  Shape s = zoo_layer("resnet18-1");
  EXPECT_EQ(dim_size(s, Dim::n, 16), 1);
  EXPECT_EQ(dim_size(s, Dim::k, 16), 64);
  EXPECT_EQ(dim_size(s, Dim::c, 16), 3);
  EXPECT_EQ(dim_size(s, Dim::h, 16), 112);  // output rows, not H=224
  EXPECT_EQ(dim_size(s, Dim::w, 16), 112);
  EXPECT_EQ(dim_size(s, Dim::r, 16), 7);
  EXPECT_EQ(dim_size(s, Dim::s, 16), 7);
  EXPECT_EQ(dim_size(zoo_layer("yolo9000-23"), Dim::k, 16), 28272);
}

TEST(Config, PaperExampleStructure) {
  Config c = parse_config(kPaper);
  ASSERT_EQ(c.specs.size(), 10u);
  EXPECT_EQ(c.specs[0].kind, SpecKind::T);
  EXPECT_EQ(c.specs[0].factor, 16);
  EXPECT_EQ(c.specs[0].dim, Dim::k);
  EXPECT_EQ(c.specs[1].kind, SpecKind::Lseq);
  EXPECT_EQ(c.specs[1].dim, Dim::h);
  EXPECT_EQ(c.specs[1].seq[0], std::make_pair(int64_t(2), int64_t(11)));
  EXPECT_EQ(c.specs[1].seq[1], std::make_pair(int64_t(1), int64_t(12)));
  EXPECT_EQ(c.specs[7].kind, SpecKind::U);
  EXPECT_TRUE(c.specs[7].alpha);
  EXPECT_EQ(c.specs[9].kind, SpecKind::V);
  EXPECT_EQ(to_string(c), kPaper);
}

TEST(Config, RoundTrip) {
  for (const std::string& text :
       {std::string(kPaper), std::string("[]"), std::string("[V(k)]"),
        std::string("[R(n), R(k), T(4,k), T(2,c), U(3,s), U(3,r), U(2,c), U(4,w), U(3,h), "
                    "U(2,k), V(k)]"),
        std::string("[R(h), Lseq(h,[(12,6),(8,7)]), T(1,c), U(a,h), V(k)]"),
        std::string("[P(2,k), P(17,h), T(8,k), T(17,w), T(256,c), U(2,h), U(2,k), V(k)]"),
        std::string("[T(16,k), T(17,h), T(17,w), T(128,c), U(3,s), U(3,r), U(2,c), U(2,w), U(2,h), U(2,k), V(k), "
                    "F(r)]"),
        std::string("[T(256,c), U(3,s), V(k), F(s)]"),
        std::string("[T(2,k), T(256,c), U(3,s), V(k), F(s), Pf(w)]"), std::string("[T(2,c), T(2,c), V(k), Pf(w)]"),
        std::string("[T(2,c), T(2,c), V(k), Pf(o)]"), std::string("[T(2,c), U(3,s), V(k), F(s), Pf(w), Pf(o)]"),
        std::string("[T(2,c), V(k), Nt(o)]"), std::string("[T(2,c), U(3,s), V(k), F(r), Pf(w), Pf(o), Nt(o)]"),
        std::string("[Flat(hw), T(32,k), Lseq(h,[(15,3),(2,2)]), T(256,c), U(a,h), U(2,k), V(k), Pf(w)]"),
        std::string("[Wino(2,68,2), T(2,k), Lseq(h,[(6,7),(2,13)]), T(16,c), U(2,c), U(a,h), U(2,k), V(k)]")}) {
    Config c = parse_config(text);
    EXPECT_EQ(to_string(c), text);
    EXPECT_EQ(parse_config(to_string(c)), c);
  }
}

TEST(Config, WhitespaceIsAllowedBetweenTokens) {
  Config c = parse_config(
      " [ T( 16 , k ) ,Lseq( h , [ ( 2 , 11 ) , ( 1 , 12 ) ] ),\tU(a , h)  ,V(k) ] ");
  EXPECT_EQ(to_string(c), "[T(16,k), Lseq(h,[(2,11),(1,12)]), U(a,h), V(k)]");
}

TEST(Config, SpecEqualityIgnoresUnusedFields) {
  Spec a, b;
  a.kind = b.kind = SpecKind::U;
  a.dim = b.dim = Dim::h;
  a.alpha = b.alpha = true;
  a.factor = 3;
  EXPECT_EQ(a, b);  // U(a,h) has no count of its own
  b.alpha = false;
  EXPECT_NE(a, b);
  Spec t1 = parse_config("[T(2,w)]").specs[0], t2 = parse_config("[T(3,w)]").specs[0];
  EXPECT_NE(t1, t2);
  EXPECT_NE(parse_config("[R(w)]").specs[0], parse_config("[R(h)]").specs[0]);
}

TEST(Config, ParallelLoop) {
  Config c = parse_config(" [ P( 2 , k ), T(8,k), T(256,c), V(k)]");
  ASSERT_EQ(c.specs.size(), 4u);
  EXPECT_EQ(c.specs[0].kind, SpecKind::P);
  EXPECT_EQ(c.specs[0].factor, 2);
  EXPECT_EQ(c.specs[0].dim, Dim::k);
  EXPECT_EQ(to_string(c), "[P(2,k), T(8,k), T(256,c), V(k)]");
  EXPECT_NE(c.specs[0], parse_config("[T(2,k)]").specs[0]);  // P is not T
  EXPECT_NE(c.specs[0], parse_config("[P(4,k)]").specs[0]);
  EXPECT_EQ(config_threads(c), 2);
  EXPECT_EQ(config_threads(parse_config("[P(2,k), P(3,h), V(k)]")), 6);
  EXPECT_EQ(config_threads(parse_config(kPaper)), 1);
  EXPECT_EQ(parse_error("[P(k)]"), "config: at column 4: expected a number, got 'k'");
  EXPECT_EQ(parse_error("[P(2,k]"), "config: at column 7: expected ')' to close the specifier, got ']'");
  // P(n,d,t): n iterations on t threads.
  Config u = parse_config("[P(17,h,2), T(3,w), V(k)]");
  EXPECT_EQ(u.specs[0].factor, 17);
  EXPECT_EQ(u.specs[0].threads, 2);
  EXPECT_EQ(to_string(u), "[P(17,h,2), T(3,w), V(k)]");
  EXPECT_NE(u.specs[0], parse_config("[P(17,h)]").specs[0]);
  EXPECT_NE(u.specs[0], parse_config("[P(17,h,3)]").specs[0]);
  EXPECT_EQ(config_threads(u), 2);
  EXPECT_EQ(config_threads(parse_config("[P(17,h,2), P(3,w), V(k)]")), 6);
  EXPECT_EQ(parse_error("[P(17,h,1)]"), "config: at column 9: a P loop's thread count is at least 2, got '1'; write "
                                        "P(n,d) for one thread per iteration");
  EXPECT_EQ(parse_error("[P(17,h,)]"), "config: at column 9: expected a number, got ')'");
}

TEST(Config, ParseErrors) {
  const std::vector<test::ErrorCase> cases = {
      {"T(16,k)]", "config: at column 1: expected '[' at the start of a configuration, got 'T'"},
      {"", "config: at column 1: expected '[' at the start of a configuration, got end of input"},
      {"[T(16,k) x]", "config: at column 10: expected ',' or ']' after a specifier, got 'x'"},
      {"[T(16,k)", "config: at column 9: expected ',' or ']' after a specifier, got end of input"},
      {"[X(1,k)]", "config: at column 2: unknown specifier 'X'; expected R, T, U, V, Lseq, P or F"},
      {"[T(16,k), ]", "config: at column 11: expected a specifier (R, T, U, V, Lseq, P or F), got ']'"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(parse_error(c.input), c.message) << c.input;
  const std::string fence_rule = "F(r) or F(s) comes last, after V(k), followed only by Pf(w), Pf(o) and Nt(o)";
  const std::string rule = "Pf(w), Pf(o) and Nt(o) come last, in that order, each at most once";
  const std::vector<test::ErrorCase> cases2 = {
      {"[T(16,c), F(s), V(k)]",
       "config: at column 17: expected Pf(w), Pf(o) or Nt(o) after F(s), got 'V'; " + fence_rule},
      {"[V(k), F(r), F(s)]", "config: at column 14: expected Pf(w), Pf(o) or Nt(o) after F(r), got 'F'; " + fence_rule},
      {"[V(k), F(r) V(k)]", "config: at column 13: expected ']' after F(r), got 'V'; " + fence_rule},
      {"[V(k), Pf(w), F(r)]", "config: at column 15: expected Pf(w), Pf(o) or Nt(o) after Pf(w), got 'F'; " + rule},
      {"[V(k), Pf(o) V(k)]", "config: at column 14: expected ']' after Pf(o), got 'V'; " + rule},
      {"[V(k), Pf(o), Pf(w)]", "config: at column 15: unexpected Pf(w) after Pf(o); " + rule},
      {"[V(k), Pf(o), F(r)]", "config: at column 15: expected Pf(w), Pf(o) or Nt(o) after Pf(o), got 'F'; " + rule},
      {"[V(k), Pf(w), Pf(w)]", "config: at column 15: unexpected Pf(w) after Pf(w); " + rule},
      {"[V(k), Nt(o), Pf(o)]", "config: at column 15: unexpected Pf(o) after Nt(o); " + rule},
      {"[V(k), F(s), Nt(o), Nt(o)]", "config: at column 21: unexpected Nt(o) after Nt(o); " + rule},
      {"[V(k), Nt(o) V(k)]", "config: at column 14: expected ']' after Nt(o), got 'V'; " + rule},
      {"[V(k), Nt(w)]",
       "config: at column 11: expected o in Nt(...), got 'w'; Nt(o) stores the output block with non-temporal "
       "stores"},
      {"[V(k), Nt]", "config: at column 10: expected '(' after 'Nt', got ']'"},
      {"[V(k), Pf(k)]",
       "config: at column 11: expected w or o in Pf(...), got 'k'; Pf(w) prefetches the next weights, Pf(o) the "
       "output block"},
      {"[V(k), Pf]", "config: at column 10: expected '(' after 'Pf', got ']'"},
      {"[V(k), F(k)]",
       "config: at column 10: expected r or s in F(...), got 'k'; F(r) fences filter rows, F(s) every tap"},
      {"[V(k), F(3,s)]",
       "config: at column 10: expected r or s in F(...), got '3'; F(r) fences filter rows, F(s) every tap"},
      {"[T[16,k)]", "config: at column 3: expected '(' after 'T', got '['"},
      {"[T(x,k)]", "config: at column 4: expected a number, got 'x'"},
      {"[T(-1,k)]", "config: at column 4: expected a number, got '-'"},
      {"[T(99999999999999999999,k)]",
       "config: at column 4: number '99999999999999999999' is too large; a count is at most a problem size "
       "(about 2^20)"},
      {"[T(9223372036854775807,k)]",
       "config: at column 4: number '9223372036854775807' is too large; a count is at most a problem size "
       "(about 2^20)"},
      {"[T(\x01,k)]", "config: at column 4: expected a number, got '\\x01'"},
      // Issue 60: a character of several bytes is quoted whole, a byte that is not UTF-8 escaped.
      {"[\xEF\xBC\xB4(2,w), V(k)]",
       "config: at column 2: expected a specifier (R, T, U, V, Lseq, P or F), got '\xEF\xBC\xB4'"},
      {"[T(2,w), \xFF]", "config: at column 10: expected a specifier (R, T, U, V, Lseq, P or F), got '\\xFF'"},
      {"[T(" + std::string(100, 'z') + ",k)]",
       "config: at column 4: expected a number, got '" + std::string(40, 'z') + "...'"},
      {"[T(16 k)]", "config: at column 7: expected ',' after the count, got 'k'"},
      {"[T(16,q)]", "config: at column 7: expected a dimension (one of n,k,c,h,w,r,s,g), got 'q'"},
      {"[T(16,kk)]", "config: at column 7: expected a dimension (one of n,k,c,h,w,r,s,g), got 'kk'"},
      {"[U(b,h)]", "config: at column 4: expected a number or 'a', got 'b'"},
      {"[U(ab,h)]", "config: at column 4: expected a number or 'a', got 'ab'"},
      {"[V(k]", "config: at column 5: expected ')' to close the specifier, got ']'"},
      {"[Lseq(h,[(2,11)])]", "config: at column 16: expected ',' between the two pairs, got ']'"},
      {"[Lseq(h,[(2,11),(1,12),(1,13)])]",
       "config: at column 23: expected ']' after two pairs (Lseq combines exactly two "
       "microkernels), got ','"},
      {"[Lseq(h,(2,11))]", "config: at column 9: expected '[' to open the list of (repeats,size) pairs, got '('"},
      {"[V(k)] x", "config: at column 8: unexpected 'x' after the closing ']'"},
  };
  for (const test::ErrorCase& c : cases2) EXPECT_EQ(parse_error(c.input), c.message) << c.input;
}

TEST(Validate, PaperExampleIsAccepted) {
  EXPECT_EQ(check(kPaper), "no error");
  // The same loops with 8 lanes leave half of k uncovered.
  EXPECT_EQ(check(kPaper, "yolo9000-12", 8),
            "config: dimension k: tile factors multiply to 256 (including 8 lanes) but the "
            "problem size is 512; every dimension must be covered exactly (000 §3.3 divisibility)");
}

TEST(Validate, OtherValidConfigs) {
  // Single microkernel on a 1x1 layer; r, s and n have size 1 and need nothing.
  EXPECT_EQ(check("[T(8,k), T(34,h), T(2,w), T(512,c), U(17,w), U(2,k), V(k)]", "yolo9000-13"),
            "no error");
  // R(d) takes what remains: factors only have to divide.
  EXPECT_EQ(check("[R(h), R(n), T(17,w), T(3,s), T(3,r), T(2,w), T(16,k), T(256,c), U(2,h), "
                  "U(2,k), V(k)]"),
            "no error");
  // Padded k: 28272 = 1767 * 16.
  EXPECT_EQ(check("[T(1767,k), T(17,h), T(17,w), T(1024,c), V(k)]", "yolo9000-23"), "no error");
  // Full microkernel order s, r, c, w, h, k.
  EXPECT_EQ(check("[T(16,k), T(17,h), T(17,w), T(128,c), U(3,s), U(3,r), U(2,c), U(2,w), U(2,h), "
                  "U(2,k), V(k)]"),
            "no error");
}

TEST(Validate, Counts) {
  const std::vector<test::ErrorCase> checks = {
      {"[T(0,k), T(256,c), V(k)]", "config: dimension k: T(0,k) has count 0; every count must be >= 1"},
      {"[T(256,c), U(0,k), V(k)]", "config: dimension k: U(0,k) has count 0; every count must be >= 1"},
      {"[Lseq(h,[(0,11),(1,12)]), T(256,c), U(a,h), V(k)]",
       "config: dimension h: Lseq(h,[(0,11),(1,12)]) has a repeat count or size below 1; "
       "every count must be >= 1"},
      {"[Lseq(h,[(2,11),(1,0)]), T(256,c), U(a,h), V(k)]",
       "config: dimension h: Lseq(h,[(2,11),(1,0)]) has a repeat count or size below 1; "
       "every count must be >= 1"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
  EXPECT_EQ(check("[T(256,c), V(k)]", "yolo9000-12", 0),
            "config: the vector length is 0; it must be >= 1");
}

TEST(Validate, Vectorisation) {
  const std::vector<test::ErrorCase> checks = {
      {"[T(256,c), U(2,k)]", "config: no V(k); the innermost specifier must be V(k) (000 §3.3)"},
      {"[]", "config: no V(k); the innermost specifier must be V(k) (000 §3.3)"},
      {"[T(256,c), V(k), V(k)]", "config: V appears 2 times; exactly one V(k) is allowed, innermost (000 §3.3)"},
      {"[T(256,c), V(k), U(2,k)]", "config: V(k) must be the innermost specifier but U(2,k) follows it (000 §3.3)"},
      {"[T(256,c), U(2,k), V(w)]", "config: dimension w: V(w) vectorises w; only k is vectorised (000 §4.1)"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
}

TEST(Validate, Microkernel) {
  const std::vector<test::ErrorCase> checks = {
      {"[U(2,w), T(256,c), U(2,k), V(k)]",
       "config: dimension w: U(2,w) is not in the microkernel; every U must be in the block "
       "directly above V(k) (000 §4.1)"},
      {"[T(256,c), U(2,k), U(2,h), V(k)]",
       "config: dimension h: U(2,h) comes after U(2,k); the microkernel order is s, r, c, "
       "w, h, k (000 §4.1)"},
      {"[T(256,c), U(3,r), U(3,s), V(k)]",
       "config: dimension s: U(3,s) comes after U(3,r); the microkernel order is s, r, c, "
       "w, h, k (000 §4.1)"},
      {"[T(256,c), U(2,w), U(17,w), V(k)]",
       "config: dimension w: U appears twice in the microkernel; each dimension is unrolled "
       "at most once (000 §4.1)"},
      {"[T(256,c), U(1,n), V(k)]",
       "config: dimension n: U(1,n) unrolls n; the microkernel unrolls only s, r, c, w, h, "
       "k (000 §4.1)"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
}

// F(r) / F(s) need taps in the microkernel to stand between; the fence is
// part of the configuration's identity.
TEST(Validate, TapFence) {
  const std::string taps =
      "[T(16,k), T(17,h), T(17,w), T(128,c), U(3,s), U(3,r), U(2,c), U(2,w), U(2,h), U(2,k), V(k)";
  EXPECT_EQ(check(taps + ", F(r)]"), "no error");
  EXPECT_EQ(check(taps + ", F(s)]"), "no error");
  EXPECT_NE(parse_config(taps + ", F(s)]"), parse_config(taps + "]"));
  EXPECT_NE(parse_config(taps + ", F(s)]"), parse_config(taps + ", F(r)]"));
  // Taps along s only: F(s) fences them, F(r) has no row to fence.
  EXPECT_EQ(check("[T(16,k), T(17,h), T(17,w), T(3,r), T(128,c), U(3,s), U(2,c), U(2,w), U(2,h), U(2,k), V(k), F(s)]"),
            "no error");
  EXPECT_EQ(check("[T(16,k), T(17,h), T(17,w), T(3,r), T(128,c), U(3,s), U(2,c), U(2,w), U(2,h), U(2,k), V(k), F(r)]"),
            "config: F(r) fences the microkernel's filter rows but it unrolls none; add U(n,r) with n >= 2 or drop "
            "F(r)");
  EXPECT_EQ(check("[T(8,k), T(34,h), T(2,w), T(512,c), U(17,w), U(2,k), V(k), F(s)]", "yolo9000-13"),
            "config: F(s) fences the microkernel's taps but it holds one; add U(n,r) or U(n,s) with n >= 2 or drop "
            "F(s)");
}

// Flat(hw) (config.h): first of all, and only where no output reads padding
// or shares an input pixel; its loops then cover Ho*Wo pixels in one column.
TEST(Config, FlatParseErrors) {
  EXPECT_NE(parse_config("[Flat(hw), V(k)]"), parse_config("[V(k)]"));
  const std::vector<test::ErrorCase> cases = {
      {"[T(2,k), Flat(hw), V(k)]", "config: at column 10: Flat(hw) comes first, before every loop"},
      {"[Flat(h), V(k)]",
       "config: at column 7: expected hw in Flat(...), got 'h'; Flat(hw) tiles the Ho*Wo output pixels as one column"},
      {"[Flat(hw)]", "config: at column 10: expected ',' after Flat(hw) (the loops follow it), got ']'"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(parse_error(c.input), c.message) << c.input;
}

// Wino(2) (config.h): first of all; its loops cover the GEMM over the tiles.
TEST(Config, WinoParseErrors) {
  const Config c = parse_config("[Wino(2), T(8,k), Lseq(h,[(47,6),(1,7)]), T(256,c), U(a,h), U(4,k), V(k), Nt(o)]");
  EXPECT_TRUE(c.wino());
  EXPECT_FALSE(c.flat());
  EXPECT_EQ(to_string(c), "[Wino(2), T(8,k), Lseq(h,[(47,6),(1,7)]), T(256,c), U(a,h), U(4,k), V(k), Nt(o)]");
  EXPECT_NE(parse_config("[Wino(2), V(k)]"), parse_config("[V(k)]"));
  const std::vector<test::ErrorCase> cases = {
      {"[T(2,k), Wino(2), V(k)]", "config: at column 10: Wino(2) comes first, before every loop"},
      {"[Wino(4), V(k)]", "config: at column 7: expected 2 in Wino(...), got '4'; Wino(2) is Winograd F(2x2,3x3)"},
      {"[Wino(2)]", "config: at column 9: expected ',' after Wino(2) (the loops follow it), got ']'"},
      {"[Flat(hw), Wino(2), V(k)]", "config: at column 12: Wino(2) comes first, before every loop"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(parse_error(c.input), c.message) << c.input;
  // Wino(2,b): the fused order, b tiles a block.
  const Config f = parse_config("[Wino(2, 17), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]");
  EXPECT_EQ(f.view, (View{View::wino, 17}));
  EXPECT_EQ(to_string(f), "[Wino(2,17), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]");
  const std::vector<test::ErrorCase> cases2 = {
      {"[Wino(2,0), V(k)]",
       "config: at column 9: a block of 0 tiles in Wino(2,b); write Wino(2) for all tiles at once or b >= 1"},
      {"[Wino(2,b), V(k)]", "config: at column 9: expected a number, got 'b'"},
      {"[Wino(2,17)]", "config: at column 12: expected ',' after Wino(2,17) (the loops follow it), got ']'"},
      {"[Flat(hw,2), V(k)]", "config: at column 9: expected ')' to close the specifier, got ','"},
  };
  for (const test::ErrorCase& c : cases2) EXPECT_EQ(parse_error(c.input), c.message) << c.input;
  // Wino(2,b,t): t threads share the blocks; t = 1 is Wino(2,b).
  const Config t = parse_config("[Wino(2,17, 2), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]");
  EXPECT_EQ(t.view, (View{View::wino, 17, 2}));
  EXPECT_EQ(to_string(t), "[Wino(2,17,2), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]");
  EXPECT_EQ(parse_config("[Wino(2,17,1), V(k)]").view, (View{View::wino, 17}));
  EXPECT_EQ(parse_error("[Wino(2,17,0), V(k)]"),
            "config: at column 12: 0 threads in Wino(2,b,t); write Wino(2,b) for the calling thread or t >= 2");
  EXPECT_EQ(parse_error("[Wino(2,17,2,2), V(k)]"), "config: at column 13: expected ')' to close the specifier, got ','");
}

TEST(Validate, Wino) {
  // yolo9000-12: 34x34 outputs, 17x17 = 289 tiles.
  const std::string l = "yolo9000-12";
  EXPECT_EQ(wino_tiles(zoo_layer(l)), 289);
  const std::vector<test::ErrorCase> cases = {
      {"[Wino(2), T(8,k), Lseq(h,[(47,6),(1,7)]), T(256,c), U(a,h), U(4,k), V(k)]", "no error"},
      {"[Wino(2), T(8,k), T(289,h), T(256,c), U(4,k), V(k), Pf(w), Pf(o), Nt(o)]", "no error"},
      {"[Wino(2), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]",
       "config: dimension h: tile factors multiply to 17 but the problem size is 289; every dimension must be "
       "covered exactly (000 §3.3 divisibility)"},
      {"[Wino(2), T(8,k), T(289,h), T(256,c), U(3,r), U(4,k), V(k)]",
       "config: dimension r: tile factors multiply to 3 but the problem size is 1; every dimension must be "
       "covered exactly (000 §3.3 divisibility)"},
      {"[Wino(2), P(2,k), T(4,k), T(289,h), T(256,c), U(4,k), V(k)]",
       "config: Wino(2) takes no P loops: its threads go over the blocks; drop the P loops and write "
       "Wino(2,b,t)"},
      // Wino(2,b,t): t threads over the 289 / 17 = 17 blocks; no more threads than blocks.
      {"[Wino(2,17,2), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]", "no error"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(check(c.input, l), c.message) << c.input;
  EXPECT_EQ(config_threads(parse_config("[Wino(2,17,2), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]")), 2);
  EXPECT_EQ(check("[Wino(2,17,18), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]", l),
            "config: Wino(2,17,18): 18 threads but 17 blocks of 17 tiles; give at most 17 threads or a smaller block");
  Config unblocked = parse_config("[Wino(2), T(8,k), T(289,h), T(256,c), U(4,k), V(k)]");
  unblocked.view.threads = 2;
  EXPECT_EQ(error_of([&] { validate_config(unblocked, zoo_layer(l), 16); }),
            "config: Wino(2) on 2 threads needs blocks to share: write Wino(2,b,2)");
  EXPECT_EQ(check("[Wino(2,17,2), P(2,k), T(4,k), T(17,h), T(256,c), U(4,k), V(k)]", l),
            "config: Wino(2) takes no P loops: its threads go over the blocks; drop the P loops and write "
            "Wino(2,b,t)");
  // Stride 2 (resnet18-10: 7x7 outputs, 4x4 = 16 tiles): the polyphase transform.
  EXPECT_EQ(check("[Wino(2), T(4,k), T(16,h), T(256,c), U(8,k), V(k)]", "resnet18-10"), "no error");
  EXPECT_EQ(check("[Wino(2), T(4,k), T(49,h), T(256,c), U(8,k), V(k)]", "resnet18-10"),
            "config: dimension h: tile factors multiply to 49 but the problem size is 16; every dimension must be "
            "covered exactly (000 \u00a73.3 divisibility)");
  EXPECT_EQ(check("[Wino(2), T(4,k), T(49,h), T(256,c), U(4,k), V(k)]", "resnet18-11"),
            "config: Wino(2) needs a dense 3x3 filter without dilation, at one stride of 1 or 2 and one pad on every "
            "side, but the shape is N=1,K=512,C=256,H=14,W=14,R=1,S=1,stride=2,pad=0; drop Wino(2)");
  const Shape s3 = parse_shape("K=16,C=16,H=9,R=3,stride=3");
  EXPECT_EQ(error_of([&] { validate_config(parse_config("[Wino(2), T(2,h), T(16,c), U(2,h), V(k)]"), s3, 16); }),
            "config: Wino(2) needs a dense 3x3 filter without dilation, at one stride of 1 or 2 and one pad on every "
            "side, but the shape is N=1,K=16,C=16,H=9,W=9,R=3,S=3,stride=3,pad=1; drop Wino(2)");
  // Odd outputs end in half tiles; batch 2 puts the images' tiles in one column.
  const Shape odd = parse_shape("N=2,K=16,C=4,H=7,W=5,R=3,pad=0");  // 5x3 outputs
  EXPECT_EQ(wino_tiles(odd), 6);
  const Shape v = wino_view(odd);
  EXPECT_EQ(v.H, 12);
  EXPECT_EQ(v.to_string(), "N=1,K=16,C=4,H=12,W=1,R=1,S=1,stride=1,pad=0");
  // Wino(2,b): the loops tile one block of b tiles; b is fewer than the tiles, and where it
  // does not divide them the last block is short (12 tiles in 3 blocks of 5: 5, 5, 2).
  EXPECT_EQ(wino_view(odd, 4).H, 4);
  EXPECT_EQ(wino_blocks(odd, 4), 3);
  EXPECT_EQ(wino_blocks(odd, 5), 3);
  EXPECT_EQ(wino_blocks(odd, 0), 1);
  auto not_a_block = [](int b) {
    return fmt::format("config: Wino(2,{}): a block must hold fewer than the 289 tiles; pick a smaller block or "
                       "write Wino(2) for one block",
                       b);
  };
  const std::pair<std::string, std::string> blocks[] = {
      {"[Wino(2,17), T(8,k), T(17,h), T(256,c), U(4,k), V(k)]", "no error"},
      {"[Wino(2,17), T(8,k), T(289,h), T(256,c), U(4,k), V(k)]",
       "config: dimension h: tile factors multiply to 289 but the problem size is 17; every dimension must be covered "
       "exactly (000 §3.3 divisibility)"},
      {"[Wino(2,7), T(8,k), T(7,h), T(256,c), U(4,k), V(k)]", "no error"},  // 42 blocks, the last of 2 tiles
      {"[Wino(2,145,2), T(8,k), T(145,h), T(256,c), U(4,k), V(k)]", "no error"},  // 145 and 144
      {"[Wino(2,145,3), T(8,k), T(145,h), T(256,c), U(4,k), V(k)]",
       "config: Wino(2,145,3): 3 threads but 2 blocks of 145 tiles; give at most 2 threads or a smaller block"},
      {"[Wino(2,289), T(8,k), T(289,h), T(256,c), U(4,k), V(k)]", not_a_block(289)},
      {"[Wino(2,300), T(8,k), T(300,h), T(256,c), U(4,k), V(k)]", not_a_block(300)},
  };
  for (const auto& [config, message] : blocks) EXPECT_EQ(check(config, l), message) << config;
}

TEST(Validate, Flat) {
  const std::string l = "resnet18-11";  // K=512, C=256, 14x14 -> 7x7, 1x1, stride 2
  EXPECT_EQ(check("[Flat(hw), T(32,k), Lseq(h,[(15,3),(2,2)]), T(256,c), U(a,h), U(2,k), V(k)]", l, 8), "no error");
  EXPECT_EQ(check("[Flat(hw), T(16,k), T(49,h), T(256,c), U(4,k), V(k)]", l, 8), "no error");
  EXPECT_EQ(check("[Flat(hw), T(16,k), T(49,h), T(256,c), U(7,w), U(4,k), V(k)]", l, 8),
            "config: dimension w: tile factors multiply to 7 but the problem size is 1; every dimension must be "
            "covered exactly (000 §3.3 divisibility)");
  EXPECT_EQ(check("[Flat(hw), T(16,k), T(7,h), T(256,c), U(4,k), V(k)]", l, 8),
            "config: dimension h: tile factors multiply to 7 but the problem size is 49; every dimension must be "
            "covered exactly (000 §3.3 divisibility)");
  EXPECT_EQ(check("[Flat(hw), T(16,k), T(1156,h), T(512,c), U(2,k), V(k)]", "yolo9000-12"),
            "config: Flat(hw) needs a 1x1 filter, no padding, no groups and more than one output column, but the "
            "shape is N=1,K=512,C=256,H=34,W=34,R=3,S=3,stride=1,pad=1 (Wo=34); drop Flat(hw)");
  EXPECT_TRUE(flat_eligible(zoo_layer(l)));
  EXPECT_FALSE(flat_eligible(parse_shape("K=16,C=4,H=8,W=1,R=1")));  // one column already
  EXPECT_FALSE(flat_eligible(parse_shape("K=16,C=4,H=8,R=1,pad=1")));
  const Shape v = flat_view(zoo_layer(l));
  EXPECT_EQ(v.to_string(), "N=1,K=512,C=256,H=49,W=1,R=1,S=1,stride=1,pad=0");
}

// Pf(w) prefetches for the innermost T or R on k or c above the reuse loop:
// one must exist, and neither it nor a loop below it may be a P.
TEST(Validate, Prefetch) {
  const std::string none =
      "config: Pf(w) prefetches the weights of the next iteration of the innermost k or c loop above the "
      "microkernel, but there is none (or it or a loop below it is a P); add T(n,k) or T(n,c) with n >= 2 above "
      "T(n,c) or drop Pf(w)";
  const std::string l = "yolo9000-13";  // K=256, C=512, 34x34, 1x1
  EXPECT_EQ(check("[T(8,k), T(17,h), T(17,w), T(256,c), U(2,c), U(2,w), U(2,h), U(2,k), V(k), Pf(w)]", l), "no error");
  EXPECT_EQ(check("[T(17,h), T(8,k), T(17,w), T(2,c), T(128,c), U(2,c), U(2,w), U(2,h), U(2,k), V(k), Pf(w)]", l),
            "no error");
  EXPECT_EQ(prefetch_loop(parse_config("[T(17,h), T(16,k), T(17,w), T(2,c), T(1,k), T(64,c), U(2,k), V(k)]")), 3);
  EXPECT_EQ(prefetch_loop(parse_config("[R(k), T(17,w), T(256,c), U(2,k), V(k)]")), 0);
  EXPECT_EQ(check("[P(8,k), T(17,h), T(17,w), T(512,c), U(2,w), U(2,h), U(2,k), V(k), Pf(w)]", l), none);
  EXPECT_EQ(check("[T(8,k), P(17,h), T(17,w), T(512,c), U(2,w), U(2,h), U(2,k), V(k), Pf(w)]", l), none);
  EXPECT_EQ(check("[P(17,h), T(8,k), T(17,w), T(512,c), U(2,w), U(2,h), U(2,k), V(k), Pf(w)]", l), "no error");
  EXPECT_EQ(prefetch_loop(parse_config("[T(16,k), T(17,h), T(17,w), T(256,c), U(2,w), U(2,h), U(2,k), V(k)]")), 0);
  EXPECT_EQ(prefetch_loop(parse_config("[T(17,h), T(17,w), T(256,c), U(2,w), U(2,h), U(2,k), V(k)]")), -1);
}

TEST(Validate, ReuseLoopAboveMicrokernel) {
  const std::string nothing =
      "config: nothing above the microkernel; it must be T(n,c) (000 §4.2: c first above the "
      "microkernel)";
  const std::vector<test::ErrorCase> checks = {
      {"[U(2,k), V(k)]", nothing},
      {"[V(k)]", nothing},
      {"[T(256,c), T(2,w), U(2,k), V(k)]",
       "config: dimension c: the specifier above the microkernel is T(2,w); it must be "
       "T(n,c) (000 §4.2: c first above the microkernel)"},
      {"[R(c), U(2,k), V(k)]",
       "config: dimension c: the specifier above the microkernel is R(c); it must be "
       "T(n,c) (000 §4.2: c first above the microkernel)"},
      {"[T(256,c), Lseq(h,[(2,11),(1,12)]), U(a,h), V(k)]",
       "config: dimension c: the specifier above the microkernel is "
       "Lseq(h,[(2,11),(1,12)]); it must be T(n,c) (000 §4.2: c first above the "
       "microkernel)"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
}

TEST(Validate, Lseq) {
  const std::vector<test::ErrorCase> checks = {
      {"[Lseq(h,[(1,11),(1,12)]), Lseq(h,[(1,5),(1,6)]), T(256,c), U(a,h), V(k)]",
       "config: dimension h: Lseq appears twice; at most one is allowed (000 §3.3)"},
      {"[Lseq(w,[(2,11),(1,12)]), T(256,c), U(a,h), V(k)]",
       "config: dimension w: Lseq(w,[(2,11),(1,12)]) combines microkernels along w; only h "
       "is combined (000 §4.2)"},
      {"[Lseq(h,[(2,11),(1,11)]), T(256,c), U(a,h), V(k)]",
       "config: dimension h: Lseq(h,[(2,11),(1,11)]) uses the size 11 twice; the two "
       "alternatives must differ (000 §4.2)"},
      {"[T(256,c), U(a,w), U(2,k), V(k)]",
       "config: dimension w: U(a,w) takes its size from an Lseq, which only h has (000 §4.2)"},
      {"[T(256,c), U(a,h), U(2,k), V(k)]",
       "config: dimension h: U(a,h) takes its size from an Lseq(h,...) above it, but there "
       "is none (000 §3.3)"},
      {"[T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), "
                  "T(256,c), U(2,h), U(2,k), V(k)]",
       "config: dimension h: Lseq(h,[(2,11),(1,12)]) needs U(a,h) in the microkernel to "
       "take its size (000 §3.3)"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
}

TEST(Validate, OuterLoops) {
  EXPECT_EQ(check("[R(h), R(h), T(17,w), T(3,s), T(3,r), T(2,w), T(16,k), T(256,c), U(2,h), "
                  "U(2,k), V(k)]"),
            "config: dimension h: R(h) appears 2 times; R may appear at most once per dimension "
            "(000 §3.3)");
  EXPECT_EQ(check("[R(h), T(17,w), T(3,s), T(3,r), T(2,w), T(16,k), T(256,c), U(4,h), U(2,k), "
                  "V(k)]"),
            "config: dimension h: tile factors multiply to 4, which does not divide the problem "
            "size 34; with R(h) they must divide it (000 §3.3 divisibility)");
}

// Issue 12: P(n,d), the parallel tile loop.
TEST(Validate, ParallelLoops) {
  // P counts like T along its dimension; one or two adjacent P above any Lseq.
  const std::vector<test::ErrorCase> checks = {
      {"[P(2,k), T(8,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), T(256,c), "
                  "U(a,h), U(2,k), V(k)]",
       "no error"},
      {"[P(2,k), P(2,w), T(8,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(256,c), "
                  "U(a,h), U(2,k), V(k)]",
       "no error"},
      {"[T(16,k), P(17,h), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]", "no error"},
      {"[P(1,n), R(h), T(17,w), T(3,s), T(3,r), T(2,w), T(16,k), T(256,c), U(2,h), U(2,k), V(k)]", "no error"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
  // Reduction dimensions never run in parallel.
  for (const char* d : {"c", "r", "s"})
    EXPECT_EQ(check(fmt::format("[P(2,{0}), T(16,k), T(17,h), T(34,w), T(3,s), T(3,r), T(128,c), U(2,h), "
                                "U(2,k), V(k)]",
                                d)),
              fmt::format("config: dimension {0}: P(2,{0}) runs a reduction dimension in parallel; only n, k, h, "
                          "w may be parallel (each output must be written by one thread only)",
                          d));
  const std::vector<test::ErrorCase> checks2 = {
      {"[T(16,k), Lseq(h,[(2,11),(1,12)]), P(17,w), T(2,w), T(3,s), T(3,r), T(256,c), U(a,h), U(2,k), "
                  "V(k)]",
       "config: dimension w: P(17,w) is inside Lseq(h,[(2,11),(1,12)]); a parallel loop must be above any "
       "Lseq"},
      {"[P(2,k), P(2,w), P(17,h), T(8,k), T(17,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: P appears 3 times; at most two parallel loops are allowed, adjacent (they become one OpenMP "
       "collapse(2) loop)"},
      {"[P(2,k), T(8,k), P(17,h), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: P(2,k) and P(17,h) are not adjacent; two parallel loops must be next to each other (they "
       "become one OpenMP collapse(2) loop)"},
      // P(n,d,t): t threads below the count; t = n is P(n,d).
      {"[T(16,k), P(17,h,2), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]", "no error"},
      {"[T(16,k), P(17,h,17), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: dimension h: P(17,h,17) has 17 threads for 17 iterations; give 2 <= t < n in P(n,h,t), or "
       "P(17,h) for one thread per iteration"},
      {"[T(16,k), P(17,h,18), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: dimension h: P(17,h,18) has 18 threads for 17 iterations; give 2 <= t < n in P(n,h,t), or "
       "P(17,h) for one thread per iteration"},
      {"[P(0,k), T(16,k), T(17,h), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: dimension k: P(0,k) has count 0; every count must be >= 1"},
      // Below the reuse loop there is only the microkernel.
      {"[T(16,k), T(17,h), T(34,w), T(3,s), T(3,r), T(256,c), P(2,h), U(2,k), V(k)]",
       "config: dimension c: the specifier above the microkernel is P(2,h); it must be T(n,c) (000 §4.2: c "
       "first above the microkernel)"},
      // P's count is a tile factor.
      {"[P(2,k), T(16,k), T(17,h), T(34,w), T(3,s), T(3,r), T(256,c), U(2,h), U(2,k), V(k)]",
       "config: dimension k: tile factors multiply to 1024 (including 16 lanes) but the problem size is 512; "
       "every dimension must be covered exactly (000 §3.3 divisibility)"},
  };
  for (const test::ErrorCase& c : checks2) EXPECT_EQ(check(c.input), c.message) << c.input;
}

TEST(Validate, Divisibility) {
  const std::vector<test::ErrorCase> checks = {
      {"[T(16,k), Lseq(h,[(2,11),(1,10)]), T(17,w), T(3,s), T(3,r), T(2,w), "
                  "T(256,c), U(a,h), U(2,k), V(k)]",
       "config: dimension h: tile factors multiply to 32 but the problem size is 34; every "
       "dimension must be covered exactly (000 §3.3 divisibility)"},
      {"[T(8,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), "
                  "T(256,c), U(a,h), U(2,k), V(k)]",
       "config: dimension k: tile factors multiply to 256 (including 16 lanes) but the "
       "problem size is 512; every dimension must be covered exactly (000 §3.3 "
       "divisibility)"},
      {"[T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,r), T(2,w), T(256,c), "
                  "U(a,h), U(2,k), V(k)]",
       "config: dimension s: no specifier covers it but the problem size is 3; add T(3,s) "
       "or R(s) (000 §3.3 divisibility)"},
      {"[T(2,n), T(16,k), Lseq(h,[(2,11),(1,12)]), T(17,w), T(3,s), T(3,r), T(2,w), "
                  "T(256,c), U(a,h), U(2,k), V(k)]",
       "config: dimension n: tile factors multiply to 2 but the problem size is 1; every "
       "dimension must be covered exactly (000 §3.3 divisibility)"},
      {"[T(4294967296,k), T(4294967296,k), T(256,c), V(k)]",
       "config: dimension k: tile factors multiply to at least 2^63 (including 16 lanes) "
       "but the problem size is 512; every dimension must be covered exactly (000 §3.3 "
       "divisibility)"},
  };
  for (const test::ErrorCase& c : checks) EXPECT_EQ(check(c.input), c.message) << c.input;
}

// config.h g: the group loop of a grouped shape, R/T/P only, outermost; the
// loops below cover one group (padded Kg, Cg).
const char* const kGrouped = "K=64,C=64,H=14,R=3,groups=16";  // Kg = Cg = 4
const char* const kGroupedConfig =
    "[P(2,g), R(g), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]";

std::string check_on(const std::string& text, const std::string& shape, int64_t lanes = 8) {
  const Config c = parse_config(text);
  return error_of([&] { validate_config(c, parse_shape(shape), lanes); });
}

TEST(Groups, SizesAndView) {
  const Shape s = parse_shape(kGrouped);
  EXPECT_TRUE(has_group_loop(s));
  EXPECT_EQ(dim_size(s, Dim::g, 8), 16);
  EXPECT_EQ(dim_size(s, Dim::k, 8), 8);  // Kg = 4 padded to the lanes
  EXPECT_EQ(dim_size(s, Dim::c, 8), 4);
  EXPECT_EQ(dim_size(s, Dim::h, 8), 14);
  const Shape v = group_view(s);
  EXPECT_EQ(v.K, 4);
  EXPECT_EQ(v.C, 4);
  EXPECT_EQ(v.groups, 1);
  EXPECT_EQ(loop_shape(zoo_layer("resnet18-1")).to_string(), zoo_layer("resnet18-1").to_string());
  EXPECT_EQ(dim_size(zoo_layer("resnet18-1"), Dim::g, 16), 1);
  // A depthwise multiplier (Kg = 2) is grouped; depthwise with Kg = 1 has no g loop.
  EXPECT_TRUE(has_group_loop(parse_shape("K=16,C=8,H=6,R=3,groups=8")));
  const Shape dw = parse_shape("K=8,C=8,H=6,R=3,groups=8");
  EXPECT_FALSE(has_group_loop(dw));
  EXPECT_EQ(dim_size(dw, Dim::g, 8), 1);
}

TEST(Groups, ParsePrintValidate) {
  const Config c = parse_config(kGroupedConfig);
  ASSERT_EQ(c.specs.size(), 10u);
  EXPECT_EQ(c.specs[0].kind, SpecKind::P);
  EXPECT_EQ(c.specs[0].dim, Dim::g);
  EXPECT_EQ(c.specs[1].kind, SpecKind::R);
  EXPECT_EQ(c.specs[1].dim, Dim::g);
  EXPECT_EQ(to_string(c), kGroupedConfig);
  EXPECT_EQ(check_on(kGroupedConfig, kGrouped), "no error");
  EXPECT_EQ(config_threads(c), 2);
  EXPECT_EQ(check_on("[T(16,g), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]", kGrouped), "no error");
  EXPECT_EQ(check_on("[P(16,g,2), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]", kGrouped), "no error");
}

// config.h Lanes(g): the groups in the vector lanes, the loops over the
// depthwise view (no g loop, c of 1); printed first; refused with its reason.
TEST(Lanes, ParsePrintValidate) {
  const std::string text = "[Lanes(g), P(2,k), T(2,k), T(14,h), T(2,w), T(1,c), U(3,s), U(3,r), U(7,w), V(k)]";
  const Config c = parse_config(text);
  EXPECT_TRUE(c.lanes());
  EXPECT_EQ(to_string(c), text);
  EXPECT_EQ(check_on(text, kGrouped, 16), "no error");  // 64 channels: 4 vectors of 16, 2 a thread
  EXPECT_TRUE(lanes_eligible(parse_shape(kGrouped), 16));
  EXPECT_TRUE(lanes_eligible(parse_shape(kGrouped), 8));
  EXPECT_FALSE(lanes_eligible(parse_shape("K=64,C=64,H=14,R=3,groups=8"), 8));   // 8 per group fill AVX2's lanes
  EXPECT_TRUE(lanes_eligible(parse_shape("K=64,C=64,H=14,R=3,groups=8"), 16));
  EXPECT_FALSE(lanes_eligible(parse_shape("K=60,C=60,H=14,R=3,groups=20"), 16));  // 3 does not divide 16
  EXPECT_FALSE(lanes_eligible(parse_shape("K=64,C=32,H=14,R=3,groups=16"), 16));  // Kg = 4, Cg = 2
  EXPECT_FALSE(lanes_eligible(parse_shape("K=16,C=16,H=14,R=3,groups=16"), 16));  // depthwise
  const Shape v = lanes_view(parse_shape(kGrouped));
  EXPECT_EQ(v.groups, 64);
  EXPECT_EQ(dim_size(v, Dim::c, 16), 1);
  EXPECT_EQ(dim_size(v, Dim::g, 16), 1);
  const std::vector<test::ErrorCase> bad = {
      {"[Lanes(x), T(1,c), U(3,s), U(3,r), V(k)]",
       "config: at column 8: expected g in Lanes(...), got 'x'; Lanes(g) puts the groups in the vector lanes"},
      {"[Lanes(g) T(1,c), U(3,s), U(3,r), V(k)]",
       "config: at column 11: expected ',' after Lanes(g) (the loops follow it), got 'T'"},
  };
  for (const test::ErrorCase& e : bad) EXPECT_EQ(parse_error(e.input), e.message) << e.input;
  EXPECT_EQ(check_on("[Lanes(g), T(14,h), T(14,w), T(4,k), T(1,c), U(3,s), U(3,r), V(k)]",
                     "K=64,C=64,H=14,R=3,groups=4", 16),
            "config: Lanes(g) needs groups of Cg = Kg channels with 1 < Cg < 16 and Cg dividing 16 (the lanes), but "
            "the shape is " + parse_shape("K=64,C=64,H=14,R=3,groups=4").to_string() +
                " (Cg=16, Kg=16); drop Lanes(g)");
  EXPECT_EQ(check_on("[Lanes(g), R(g), T(14,h), T(14,w), T(4,k), T(1,c), U(3,s), U(3,r), V(k)]", kGrouped, 16),
            "config: dimension g: R(g) loops over groups, but the shape " +
                lanes_view(parse_shape(kGrouped)).to_string() +
                " has one output per group (depthwise, its channels in the vector lanes); drop the g loops");
}

TEST(Groups, Errors) {
  const std::string dense = "K=64,C=64,H=14,R=3";
  EXPECT_EQ(check_on("[R(g), T(7,h), T(2,w), T(3,s), T(3,r), T(64,c), U(7,w), U(2,h), U(8,k), V(k)]", dense),
            "config: dimension g: R(g) loops over groups, but the shape " + parse_shape(dense).to_string() +
                " has no groups (groups=1); drop the g loops");
  const std::string dw = "K=8,C=8,H=14,R=3,groups=8";
  EXPECT_EQ(check_on("[R(g), T(7,h), T(2,w), T(3,s), T(3,r), T(1,c), U(7,w), U(2,h), V(k)]", dw),
            "config: dimension g: R(g) loops over groups, but the shape " + parse_shape(dw).to_string() +
                " has one output per group (depthwise, its channels in the vector lanes); drop the g loops");
  const std::vector<test::ErrorCase> cases = {
      {"[T(7,h), R(g), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]",
       "config: dimension g: R(g) comes after T(7,h); the group loops come first, above every other loop"},
      {"[P(2,h), P(2,g), T(7,h), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]",
       "config: dimension g: P(2,g) comes after P(2,h); the group loops come first, above every other loop"},
      {"[T(8,g), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(2,g), U(7,w), U(2,h), V(k)]",
       "config: dimension g: U(2,g) is not a group loop; g takes only R(g), T(n,g) and P(n,g), above every "
       "other loop"},
      {"[T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]",
       "config: dimension g: no specifier covers it but the problem size is 16; add T(16,g) or R(g) (000 "
       "§3.3 divisibility)"},
      {"[T(8,g), T(7,h), T(2,w), T(3,s), T(3,r), T(4,c), U(7,w), U(2,h), V(k)]",
       "config: dimension g: tile factors multiply to 8 but the problem size is 16; every dimension must be "
       "covered exactly (000 §3.3 divisibility)"},
      // The dense C is not a group's: c covers Cg = 4.
      {"[R(g), T(7,h), T(2,w), T(3,s), T(3,r), T(64,c), U(7,w), U(2,h), V(k)]",
       "config: dimension c: tile factors multiply to 64 but the problem size is 4; every dimension must be "
       "covered exactly (000 §3.3 divisibility)"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(check_on(c.input, kGrouped), c.message) << c.input;
  EXPECT_EQ(parse_error("[R(x)]"), "config: at column 4: expected a dimension (one of n,k,c,h,w,r,s,g), got 'x'");
}

}  // namespace
}  // namespace convtune::config_test
