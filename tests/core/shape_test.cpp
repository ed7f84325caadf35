// Shapes: FLOP counts, output sizes, the text form and the layer zoo.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convtune/core/error.h"
#include "convtune/core/shape.h"
#include "test_util.h"

namespace convtune::shape_test {
namespace {

using test::error_of;

// The message parse_shape gives for `text`, or "no error".
std::string shape_error(const std::string& text) {
  return error_of([&] { parse_shape(text); });
}

std::vector<int64_t> fields(const Shape& s) {
  return {s.N,     s.K,     s.C,     s.H,     s.W,     s.R,     s.S,     s.stride_h,
          s.stride_w, s.pad_t, s.pad_l, s.pad_b, s.pad_r, s.dil_h, s.dil_w, s.groups};
}

// Straightforward count of the multiply-adds that read a real input element.
double brute_real_flops(const Shape& s) {
  auto valid = [&](int64_t in, int64_t out, int64_t kernel) {
    int64_t n = 0;
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < kernel; ++k) {
        int64_t i = o * s.stride() + k - s.pad();
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

// The bytes a bench's GB/s divides by: each tensor once, weights of one group's channels.
TEST(Shape, TensorBytesCountEachTensorOnce) {
  Shape dw = parse_shape("K=96,C=96,H=112,R=3,stride=2,groups=96");  // mobilenet_v2's, 56x56 out
  EXPECT_EQ(dw.tensor_bytes(), 4.0 * (96 * 112 * 112 + 96 * 1 * 9 + 96 * 56 * 56));
  Shape grouped = parse_shape("K=128,C=128,H=56,R=3,groups=32");
  EXPECT_EQ(grouped.tensor_bytes(), 4.0 * (128 * 56 * 56 + 128 * 4 * 9 + 128 * 56 * 56));
  Shape batch = parse_shape("N=2,K=8,C=4,H=5,W=7,R=1,S=3,pad_h=0,pad_w=1");
  EXPECT_EQ(batch.tensor_bytes(), 4.0 * (2 * 4 * 5 * 7 + 8 * 4 * 3 + 2 * 8 * 5 * 7));
}

TEST(Shape, RealFlopsMatchBruteForceOnEveryZooLayer) {
  for (const Network& net : zoo())
    for (const Shape& s : net.layers) {
      EXPECT_EQ(s.real_flops(), brute_real_flops(s)) << s.name;
      if (s.R == 1 && s.S == 1 && s.pad() == 0)
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
    EXPECT_EQ(s.stride(), 1) << s.name;
    EXPECT_EQ(s.pad(), (s.R - 1) / 2) << s.name;
    EXPECT_EQ(s.H, s.W) << s.name;
  }
  EXPECT_EQ(fields(zoo_layer("resnet18-8")), (std::vector<int64_t>{1, 256, 128, 28, 28, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(fields(zoo_layer("yolo9000-0")), (std::vector<int64_t>{1, 32, 3, 544, 544, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
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
  EXPECT_EQ(fields(s), (std::vector<int64_t>{1, 512, 256, 34, 34, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(parse_shape("K=8,C=4,H=10,R=1").pad(), 0);
  EXPECT_EQ(parse_shape("K=8,C=4,H=10,R=7").pad(), 3);
}

TEST(ParseShape, AllFieldsAnyOrderWithSpaces) {
  Shape s = parse_shape(" pad = 0 , stride=2,S=1 ,R= 5, W=9,H=11,C=3,K=7, N=2 ");
  EXPECT_EQ(fields(s), (std::vector<int64_t>{2, 7, 3, 11, 9, 5, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1}));
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
  const std::vector<test::ErrorCase> cases = {
      {"K=1,C=1,H=5,R=3,X=2",
       "shape: field 'X' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
       "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)"},
      {"k=1,C=1,H=5,R=3",
       "shape: field 'k' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
       "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)"},
      {"C=256,H=34,R=3", "shape: K is missing; give it as K=<int>"},
      {"K=1,H=34,R=3", "shape: C is missing; give it as C=<int>"},
      {"K=1,C=1,W=34,R=3", "shape: H is missing; give it as H=<int>"},
      {"K=1,C=1,H=34,S=3", "shape: R is missing; give it as R=<int>"},
      {"K=1,C=abc,H=3,R=1", "shape: 'C=abc' is not a positive integer"},
      {"K=0,C=1,H=3,R=1", "shape: 'K=0' is not a positive integer"},
      {"K=-1,C=1,H=3,R=1", "shape: 'K=-1' is not a positive integer"},
      {"K=,C=1,H=3,R=1", "shape: 'K=' is not a positive integer"},
      {"K=1,C=1,H=3,R=1,pad=-1", "shape: 'pad=-1' is not a non-negative integer"},
      {"K=1,K=2,C=1,H=3,R=1", "shape: field 'K' given twice"},
      {"", "shape: empty shape; give at least K, C, H and R, e.g. K=512,C=256,H=34,R=3"},
      {"K=1,,C=1", "shape: empty field in 'K=1,,C=1'; separate fields with single commas"},
      {"K=1,C=1,H=3,R=1,", "shape: empty field in 'K=1,C=1,H=3,R=1,'; separate fields with single commas"},
      {"K512,C=1", "shape: 'K512' is not a field=value pair; write e.g. K=512"},
      {"K=1,C=1,H=3,R=7,pad=1", "shape: R=7 is larger than H+pad_t+pad_b=5; use a smaller R, or more pad"},
      {"K=1,C=1,H=9,W=3,R=5,pad=0", "shape: S=5 is larger than W+pad_l+pad_r=3; use a smaller S, or more pad"},
      {"K=20000000,C=1,H=3,R=1", "shape: K=20000000 is too large; K is at most 1048576"},
      {"K=1,C=1,H=3,R=1,N=99999999999999999999", "shape: N=99999999999999999999 is too large; N is at most 1048576"},
      {"K=000000000001,C=1,H=3,R=1", "no error"},  // leading zeros are not size
      {"K=1,C=1,H=3,R=7,pad=2", "no error"},  // 3+2*2 = 7 fits exactly
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(shape_error(c.input), c.message) << c.input;
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
  EXPECT_EQ(err(&Shape::stride_w, 0), "shape: stride_w=0 must be >= 1");
  EXPECT_EQ(err(&Shape::pad_b, -1), "shape: pad_b=-1 must be >= 0");
  EXPECT_EQ(err(&Shape::pad_l, 0), "no error");
  EXPECT_EQ(err(&Shape::dil_h, 0), "shape: dilation_h=0 must be >= 1");
  EXPECT_EQ(err(&Shape::groups, 0), "shape: groups=0 must be >= 1");
  EXPECT_EQ(err(&Shape::W, (int64_t(1) << 20) + 1), "shape: W=1048577 is too large; W is at most 1048576");
  EXPECT_EQ(err(&Shape::W, std::numeric_limits<int64_t>::max()),
            "shape: W=9223372036854775807 is too large; W is at most 1048576");
  EXPECT_EQ(err(&Shape::pad_t, 1025), "shape: pad_t=1025 is too large; pad_t is at most 1024");
  EXPECT_EQ(err(&Shape::stride_h, 1025), "shape: stride_h=1025 is too large; stride_h is at most 1024");
  EXPECT_EQ(err(&Shape::S, 4), "shape: S=4 is larger than W+pad_l+pad_r=3; use a smaller S, or more pad");
}

TEST(ValidateShape, LimitsNameTheFieldAndTheFix) {
  // Used to abort with std::bad_alloc (a 25.6e9-float input).
  const std::vector<test::ErrorCase> cases = {
      {"K=64,C=64,H=20000,R=3",
       "shape: the input (N=1 x (H+pad_t+pad_b)=20002 x (W+pad_l+pad_r)=20002 x C=64) holds 25605120256 floats, "
       "more than the limit of 268435456 (1 GiB); use a smaller N, H, W, C or pad"},
      // Used to hang in build_space.
      {"K=64,C=64,H=14,R=3,pad=1000000", "shape: pad=1000000 is too large; pad is at most 1024"},
      {"K=64,C=64,H=14,R=3,H=2000000", "shape: field 'H' given twice"},
      {"K=64,C=64,H=2000000,R=3", "shape: H=2000000 is too large; H is at most 1048576"},
      {"K=64,C=64,H=14,R=3,N=0", "shape: 'N=0' is not a positive integer"},
      {"K=1000000,C=1000,H=1,R=1",
       "shape: the weights (R=1 x S=1 x C/groups=1000 x K padded to 16=1000000) holds 1000000000 floats, more "
       "than the limit of 268435456 (1 GiB); use a smaller R, S, C or K"},
      {"K=1024,C=1,H=600,R=1",
       "shape: the output (N=1 x Ho=600 x Wo=600 x K padded to 16=1024) holds 368640000 floats, more than "
       "the limit of 268435456 (1 GiB); use a smaller N, H, W, K or pad, or a larger stride"},
      {"K=512,C=512,H=700,R=1,stride=2", "no error"},  // 250880000 + 262144 + 62720000 floats
      {"K=512,C=512,H=724,R=1",
       "shape: input, weights and output together hold 537018368 floats, more than the limit of 536870912 "
       "(2 GiB) for one run; use a smaller shape"},
      {"K=4096,C=4096,H=128,R=3", "no error"},  // 4.95e12 FLOP
      {"K=1024,C=1024,H=450,R=7",
       "shape: 2.08e+13 FLOP per convolution is more than the limit of 1.76e+13 (minutes per call on one "
       "core); use a smaller shape"},
      {"K=16384,C=16384,H=1,R=1", "no error"},  // weights exactly at the limit
      {"K=16385,C=16384,H=1,R=1",
       "shape: the weights (R=1 x S=1 x C/groups=16384 x K padded to 16=16400) holds 268697600 floats, more than "
       "the limit of 268435456 (1 GiB); use a smaller R, S, C or K"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(shape_error(c.input), c.message) << c.input;
  // The largest sizes do not overflow int64 anywhere in the checks.
  EXPECT_EQ(shape_error("N=1048576,K=1048576,C=1048576,H=1048576,W=1048576,R=1024,S=1024,stride=1024,pad=1024")
                .substr(0, 22),
            "shape: the input (N=10");
}

TEST(ParseShape, GroupsDilationAndPerAxisWindows) {
  Shape g = parse_shape("K=64,C=128,H=14,R=3,groups=32");
  EXPECT_EQ(g.groups, 32);
  EXPECT_EQ(g.Cg(), 4);
  EXPECT_EQ(g.Kg(), 2);
  EXPECT_FALSE(g.depthwise());
  EXPECT_EQ(g.flops(), 2.0 * 64 * 4 * 9 * 14 * 14);
  EXPECT_TRUE(parse_shape("K=32,C=32,H=14,R=3,groups=32").depthwise());
  // 1x7 with pads (0,3): "same" per axis by default, or given per axis.
  Shape wide = parse_shape("K=8,C=8,H=17,R=1,S=7");
  EXPECT_EQ(std::vector<int64_t>({wide.pad_t, wide.pad_l, wide.pad_b, wide.pad_r}), std::vector<int64_t>({0, 3, 0, 3}));
  EXPECT_EQ(wide.to_string(), "N=1,K=8,C=8,H=17,W=17,R=1,S=7,stride=1,pad_h=0,pad_w=3");
  EXPECT_EQ(wide.Wo(), 17);
  // Asymmetric pads (TensorFlow's SAME at stride 2).
  Shape asym = parse_shape("K=8,C=8,H=16,R=3,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1");
  EXPECT_EQ(asym.Ho(), 8);
  EXPECT_EQ(asym.to_string(), "N=1,K=8,C=8,H=16,W=16,R=3,S=3,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1");
  EXPECT_EQ(layer_id(asym), "N1_K8_C8_H16_W16_R3_S3_st2_p0-0-1-1");
  // Dilation: same pads grow with it; the kernel spans dil*(R-1)+1.
  Shape dil = parse_shape("K=8,C=8,H=33,R=3,dilation=4");
  EXPECT_EQ(dil.pad(), 4);
  EXPECT_EQ(dil.Ho(), 33);
  EXPECT_EQ(dil.to_string(), "N=1,K=8,C=8,H=33,W=33,R=3,S=3,stride=1,pad=4,dilation=4");
  Shape per = parse_shape("K=8,C=8,H=20,W=10,R=3,stride_h=2,stride_w=1,dilation_h=2,dilation_w=1,pad=1,groups=4");
  EXPECT_EQ(per.Ho(), 9);
  EXPECT_EQ(per.Wo(), 10);
  EXPECT_EQ(per.to_string(),
            "N=1,K=8,C=8,H=20,W=10,R=3,S=3,stride_h=2,stride_w=1,pad=1,dilation_h=2,dilation_w=1,groups=4");
  EXPECT_EQ(layer_id(per), "N1_K8_C8_H20_W10_R3_S3_st2x1_p1_d2x1_g4");
  for (const Shape& s : {g, wide, asym, dil, per}) {
    EXPECT_EQ(fields(parse_shape(s.to_string())), fields(s)) << s.to_string();
    EXPECT_FALSE(s.plain()) << s.to_string();
  }
  // groups=1 and dilation=1 are the plain shape, printed as ever.
  Shape plain = parse_shape("K=64,C=64,H=14,R=3,groups=1,dilation=01");
  EXPECT_TRUE(plain.plain());
  EXPECT_EQ(plain.to_string(), parse_shape("K=64,C=64,H=14,R=3").to_string());
}

TEST(ParseShape, BadGroupsDilationAndPads) {
  const std::vector<test::ErrorCase> cases = {
      {"K=64,C=64,H=14,R=3,groups=10", "shape: groups=10 does not divide C=64; groups must divide both C and K"},
      {"K=30,C=64,H=14,R=3,groups=4", "shape: groups=4 does not divide K=30; groups must divide both C and K"},
      {"K=64,C=64,H=14,R=3,groups=0", "shape: 'groups=0' is not a positive integer"},
      {"K=64,C=64,H=14,R=3,dilation=0", "shape: 'dilation=0' is not a positive integer"},
      {"K=64,C=64,H=14,R=3,pad=1,dilation=8",
       "shape: R=3 at dilation 8 spans 17 rows, more than H+pad_t+pad_b=16; use a smaller R or dilation, or "
       "more pad"},
      {"K=64,C=64,H=14,R=3,stride=2,stride_h=1", "shape: 'stride' and 'stride_h' both set stride_h; give one of them"},
      {"K=64,C=64,H=14,R=3,pad_h=1,pad_t=0", "shape: 'pad_h' and 'pad_t' both set pad_t; give one of them"},
      {"K=64,C=64,H=14,R=3,pad_t=-1", "shape: 'pad_t=-1' is not a non-negative integer"},
      {"K=64,C=64,H=14,R=3,pad_r=2000", "shape: pad_r=2000 is too large; pad_r is at most 1024"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(shape_error(c.input), c.message) << c.input;
}

TEST(ParseShape, MessagesStayOneLine) {
  // Control characters and bytes that are not UTF-8 escaped (text.h escape_text).
  const std::vector<test::ErrorCase> cases = {
      {"K=1,\nX=2,C=1",
       "shape: field '\\nX' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
       "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)"},
      {"K=1,\nX\r=2,C=1",
       "shape: field '\\nX\\x0D' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
       "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)"},
      {"K=1,C=1,H=3,R=1,,\n", "shape: empty field in 'K=1,C=1,H=3,R=1,,\\n'; separate fields with single commas"},
      {"K=1,\xFFX=2",
       "shape: field '\\xFFX' is unknown; use N,K,C,H,W,R,S,stride,pad,dilation,groups "
       "(per axis: stride_h,stride_w,pad_h,pad_w,pad_t,pad_l,pad_b,pad_r,dilation_h,dilation_w)"},
      {"K=" + std::string(100, 'x'), "shape: 'K=" + std::string(60, 'x') + "...' is not a positive integer"},
  };
  for (const test::ErrorCase& c : cases) EXPECT_EQ(shape_error(c.input), c.message) << c.input;
}

}  // namespace
}  // namespace convtune::shape_test
