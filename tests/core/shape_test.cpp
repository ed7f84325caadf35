// Shapes: FLOP counts, output sizes, the text form and the layer zoo.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convtune/core/error.h"
#include "convtune/core/shape.h"
#include "test_util.h"

namespace convtune {
namespace {

using test::error_of;

std::vector<int64_t> fields(const Shape& s) {
  return {s.N, s.K, s.C, s.H, s.W, s.R, s.S, s.stride, s.pad};
}

// Straightforward count of the multiply-adds that read a real input element.
double brute_real_flops(const Shape& s) {
  auto valid = [&](int64_t in, int64_t out, int64_t kernel) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < kernel; ++k) {
        int64_t i = o * s.stride + k - s.pad;
        n += i >= 0 && i < in;
      }
    return n;
  };
  return 2.0 * s.N * s.K * s.C * double(valid(s.H, s.Ho(), s.R)) * double(valid(s.W, s.Wo(), s.S));
}

TEST(Shape, FlopsOfYolo12) {
  Shape s = zoo_layer("yolo9000-12");
  EXPECT_EQ(s.flops(), 2727346176.0);  // 2*512*256*9*34*34
  // Along each axis 2 of the 34*3 (oh, r) pairs fall in the padding: 100 remain.
  EXPECT_EQ(s.real_flops(), 2.0 * 512 * 256 * 100 * 100);
  EXPECT_LT(s.real_flops(), s.flops());
}

TEST(Shape, RealFlopsOfStridedLayer) {
  Shape s = zoo_layer("resnet18-1");
  EXPECT_EQ(s.Ho(), 112);
  EXPECT_EQ(s.Wo(), 112);
  // 112*7 (oh, r) pairs, of which 4 read the top padding and 2 the bottom.
  EXPECT_EQ(s.real_flops(), 2.0 * 64 * 3 * 778 * 778);
  EXPECT_EQ(s.flops(), 2.0 * 64 * 3 * 49 * 112 * 112);
}

TEST(Shape, RealFlopsMatchBruteForceOnEveryZooLayer) {
  for (const Network& net : zoo())
    for (const Shape& s : net.layers) {
      EXPECT_EQ(s.real_flops(), brute_real_flops(s)) << s.name;
      if (s.R == 1 && s.S == 1 && s.pad == 0)
        EXPECT_EQ(s.real_flops(), s.flops()) << s.name;
      else
        EXPECT_LT(s.real_flops(), s.flops()) << s.name;
    }
}

TEST(Shape, RealFlopsWithPaddingWiderThanTheKernelReach) {
  Shape s = parse_shape("K=1,C=1,H=2,W=3,R=1,S=2,stride=2,pad=2");
  EXPECT_EQ(s.Ho(), 3);  // input rows -2, 0, 2: only row 0 is real
  EXPECT_EQ(s.Wo(), 3);  // input columns -2..3 in pairs: 0, 1 and 2 are real
  EXPECT_EQ(s.real_flops(), brute_real_flops(s));
  EXPECT_EQ(s.real_flops(), 2.0 * 1 * 3);
}

TEST(Shape, OutputSizesOfStridedLayers) {
  EXPECT_EQ(zoo_layer("resnet18-4").Ho(), 28);
  EXPECT_EQ(zoo_layer("resnet18-5").Ho(), 28);
  EXPECT_EQ(zoo_layer("resnet18-10").Wo(), 7);
  EXPECT_EQ(zoo_layer("resnet18-11").Wo(), 7);
  EXPECT_EQ(zoo_layer("yolo9000-18").Ho(), 17);
  EXPECT_EQ(zoo_layer("yolo9000-18").Hp(), 19);
}

TEST(Shape, PaddedK) {
  Shape s = zoo_layer("yolo9000-23");
  EXPECT_EQ(s.K, 28269);
  EXPECT_EQ(s.padded_K(16), 28272);  // 000 Fig. 8
  EXPECT_EQ(s.padded_K(8), 28272);
  EXPECT_EQ(zoo_layer("yolo9000-12").padded_K(16), 512);
}

TEST(Zoo, Contents) {
  std::vector<Network> z = zoo();
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0].name, "yolo9000");
  EXPECT_EQ(z[0].layers.size(), 11u);
  EXPECT_EQ(z[1].name, "resnet18");
  EXPECT_EQ(z[1].layers.size(), 12u);
  EXPECT_EQ(zoo_network("resnet18").layers.front().name, "resnet18-1");
  EXPECT_EQ(zoo_network("yolo9000").layers.back().name, "yolo9000-23");
  for (const Shape& s : z[0].layers) {
    EXPECT_EQ(s.stride, 1) << s.name;
    EXPECT_EQ(s.pad, (s.R - 1) / 2) << s.name;
    EXPECT_EQ(s.H, s.W) << s.name;
  }
  EXPECT_EQ(fields(zoo_layer("resnet18-8")), (std::vector<int64_t>{1, 256, 128, 28, 28, 1, 1, 2, 0}));
  EXPECT_EQ(fields(zoo_layer("yolo9000-0")), (std::vector<int64_t>{1, 32, 3, 544, 544, 3, 3, 1, 1}));
}

TEST(Zoo, UnknownNames) {
  EXPECT_EQ(error_of([] { zoo_layer("yolo9000-7"); }),
            "unknown layer 'yolo9000-7'; run 'convtune layers' to list them "
            "(did you mean 'yolo9000-8'?)");
  EXPECT_EQ(error_of([] { zoo_layer("Resnet18-12"); }),
            "unknown layer 'Resnet18-12'; run 'convtune layers' to list them "
            "(did you mean 'resnet18-12'?)");
  EXPECT_EQ(error_of([] { zoo_layer("foo"); }),
            "unknown layer 'foo'; run 'convtune layers' to list them");
  EXPECT_EQ(error_of([] { zoo_network("resnet19"); }),
            "unknown network 'resnet19'; the networks are yolo9000, resnet18 "
            "(did you mean 'resnet18'?)");
  EXPECT_EQ(error_of([] { zoo_network("vgg"); }),
            "unknown network 'vgg'; the networks are yolo9000, resnet18");
}

TEST(ParseShape, Defaults) {
  Shape s = parse_shape("K=512,C=256,H=34,R=3");
  EXPECT_EQ(s.name, "");
  EXPECT_EQ(fields(s), (std::vector<int64_t>{1, 512, 256, 34, 34, 3, 3, 1, 1}));
  EXPECT_EQ(parse_shape("K=8,C=4,H=10,R=1").pad, 0);
  EXPECT_EQ(parse_shape("K=8,C=4,H=10,R=7").pad, 3);
}

TEST(ParseShape, AllFieldsAnyOrderWithSpaces) {
  Shape s = parse_shape(" pad = 0 , stride=2,S=1 ,R= 5, W=9,H=11,C=3,K=7, N=2 ");
  EXPECT_EQ(fields(s), (std::vector<int64_t>{2, 7, 3, 11, 9, 5, 1, 2, 0}));
  EXPECT_EQ(s.Ho(), 4);
  EXPECT_EQ(s.Wo(), 5);
}

TEST(ParseShape, ToStringRoundTrip) {
  EXPECT_EQ(zoo_layer("yolo9000-12").to_string(), "N=1,K=512,C=256,H=34,W=34,R=3,S=3,stride=1,pad=1");
  for (const Network& net : zoo())
    for (const Shape& s : net.layers) {
      Shape back = parse_shape(s.to_string());
      EXPECT_EQ(fields(back), fields(s)) << s.name;
      EXPECT_EQ(back.to_string(), s.to_string());
    }
  Shape odd = parse_shape("N=3,K=5,C=7,H=9,W=4,R=2,S=4,stride=3,pad=0");
  EXPECT_EQ(fields(parse_shape(odd.to_string())), fields(odd));
}

TEST(ParseShape, Errors) {
  auto err = [](const std::string& text) { return error_of([&] { parse_shape(text); }); };
  EXPECT_EQ(err("K=1,C=1,H=5,R=3,X=2"), "shape: field 'X' is unknown; use N,K,C,H,W,R,S,stride,pad");
  EXPECT_EQ(err("k=1,C=1,H=5,R=3"), "shape: field 'k' is unknown; use N,K,C,H,W,R,S,stride,pad");
  EXPECT_EQ(err("C=256,H=34,R=3"), "shape: K is missing; give it as K=<int>");
  EXPECT_EQ(err("K=1,H=34,R=3"), "shape: C is missing; give it as C=<int>");
  EXPECT_EQ(err("K=1,C=1,W=34,R=3"), "shape: H is missing; give it as H=<int>");
  EXPECT_EQ(err("K=1,C=1,H=34,S=3"), "shape: R is missing; give it as R=<int>");
  EXPECT_EQ(err("K=1,C=abc,H=3,R=1"), "shape: 'C=abc' is not a positive integer");
  EXPECT_EQ(err("K=0,C=1,H=3,R=1"), "shape: 'K=0' is not a positive integer");
  EXPECT_EQ(err("K=-1,C=1,H=3,R=1"), "shape: 'K=-1' is not a positive integer");
  EXPECT_EQ(err("K=,C=1,H=3,R=1"), "shape: 'K=' is not a positive integer");
  EXPECT_EQ(err("K=1,C=1,H=3,R=1,pad=-1"), "shape: 'pad=-1' is not a non-negative integer");
  EXPECT_EQ(err("K=1,K=2,C=1,H=3,R=1"), "shape: field 'K' given twice");
  EXPECT_EQ(err(""), "shape: empty shape; give at least K, C, H and R, e.g. K=512,C=256,H=34,R=3");
  EXPECT_EQ(err("K=1,,C=1"), "shape: empty field in 'K=1,,C=1'; separate fields with single commas");
  EXPECT_EQ(err("K=1,C=1,H=3,R=1,"),
            "shape: empty field in 'K=1,C=1,H=3,R=1,'; separate fields with single commas");
  EXPECT_EQ(err("K512,C=1"), "shape: 'K512' is not a field=value pair; write e.g. K=512");
  EXPECT_EQ(err("K=1,C=1,H=3,R=7,pad=1"), "shape: R=7 is larger than H+2*pad=5; use a smaller R or more pad");
  EXPECT_EQ(err("K=1,C=1,H=9,W=3,R=5,pad=0"),
            "shape: S=5 is larger than W+2*pad=3; use a smaller S or more pad");
  EXPECT_EQ(err("K=20000000,C=1,H=3,R=1"), "shape: K=20000000 is too large; sizes are at most 16777216");
  EXPECT_EQ(err("K=1,C=1,H=3,R=1,N=99999999999999999999"),
            "shape: N=99999999999999999999 is too large; sizes are at most 16777216");
  EXPECT_EQ(err("K=1,C=1,H=3,R=7,pad=2"), "no error");  // 3+2*2 = 7 fits exactly
}

TEST(ValidateShape, Errors) {
  Shape ok = parse_shape("K=1,C=1,H=3,R=1");
  auto err = [&](int64_t Shape::*field, int64_t v) {
    Shape s = ok;
    s.*field = v;
    return error_of([&] { validate_shape(s); });
  };
  EXPECT_EQ(err(&Shape::N, 0), "shape: N=0 must be >= 1");
  EXPECT_EQ(err(&Shape::C, -4), "shape: C=-4 must be >= 1");
  EXPECT_EQ(err(&Shape::stride, 0), "shape: stride=0 must be >= 1");
  EXPECT_EQ(err(&Shape::pad, -1), "shape: pad=-1 must be >= 0");
  EXPECT_EQ(err(&Shape::pad, 0), "no error");
  EXPECT_EQ(err(&Shape::W, (int64_t(1) << 24) + 1),
            "shape: W=16777217 is too large; sizes are at most 16777216");
  EXPECT_EQ(err(&Shape::S, 4), "shape: S=4 is larger than W+2*pad=3; use a smaller S or more pad");
}

}  // namespace
}  // namespace convtune
