// The runner's pieces that need no process: the result-line protocol shared
// by the native and emulated runners, and the reference convolution.
#include <gtest/gtest.h>

#include "convtune/execution/runner.h"

namespace convtune {
namespace {

TEST(ResultLine, OkWithCounters) {
  RunResult r;
  ASSERT_TRUE(parse_result_line("ok 0.0025 samples 0.0024 0.0025 0.0026 counters 2 1000 20 names PAPI_TOT_CYC,PAPI_L1_DCM", &r));
  EXPECT_EQ(r.status, "ok");
  EXPECT_DOUBLE_EQ(r.seconds, 0.0025);
  EXPECT_EQ(r.samples, (std::vector<double>{0.0024, 0.0025, 0.0026}));
  EXPECT_EQ(r.counters, (std::vector<long long>{1000, 20}));
  EXPECT_EQ(r.counter_names, "PAPI_TOT_CYC,PAPI_L1_DCM");
}

TEST(ResultLine, OkWithoutCountersAsTheEmulatedDriverPrints) {
  RunResult r;
  r.counter_names = "none: emulated";
  ASSERT_TRUE(parse_result_line("ok 1.5 samples 1.4 1.6", &r));
  EXPECT_EQ(r.samples, (std::vector<double>{1.4, 1.6}));
  EXPECT_TRUE(r.counters.empty());
  EXPECT_EQ(r.counter_names, "none: emulated");  // left as the caller set it
}

TEST(ResultLine, FailuresCarryTheirReason) {
  RunResult r;
  ASSERT_TRUE(parse_result_line("wrong_result output element 7 differs from the reference by 1 (tolerance 0.01)", &r));
  EXPECT_EQ(r.status, "wrong_result");
  EXPECT_EQ(r.detail, "output element 7 differs from the reference by 1 (tolerance 0.01)");
  RunResult l;
  ASSERT_TRUE(parse_result_line("load_error cannot load x.so: bad ELF", &l));
  EXPECT_EQ(l.status, "load_error");
  EXPECT_EQ(l.detail, "cannot load x.so: bad ELF");
}

TEST(ResultLine, OtherLinesAreNotResults) {
  RunResult r;
  EXPECT_FALSE(parse_result_line("verified", &r));
  EXPECT_FALSE(parse_result_line("", &r));
  EXPECT_FALSE(parse_result_line("okay 1", &r));
  EXPECT_EQ(r.status, "crash");  // untouched default
}

// A 1-channel 3x3 convolution with pad 1, computed by hand at two points.
TEST(Reference, PointsMatchAHandComputation) {
  Shape s = parse_shape("K=1,C=1,H=3,R=3");
  ProblemData p = ProblemData::make(s, 16, 0, 3);
  ASSERT_EQ(p.Kp, 16);
  ASSERT_EQ(p.output_size(), 3u * 3u * 16u);
  auto in = [&](int y, int x) { return double(p.input[size_t(y * 5 + x)]); };  // padded 5x5, C=1
  auto w = [&](int r, int q) { return double(p.weights[size_t((r * 3 + q) * 16)]); };
  double centre = 0, corner = 0;
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) {
      centre += in(1 + r, 1 + q) * w(r, q);
      corner += in(r, q) * w(r, q);  // output (0,0) reads the padded border
    }
  EXPECT_DOUBLE_EQ(reference_point(p, (1 * 3 + 1) * 16), centre);
  EXPECT_DOUBLE_EQ(reference_point(p, 0), corner);
  EXPECT_DOUBLE_EQ(reference_point(p, 5), 0.0);  // a padded K column: zero weights
  EXPECT_EQ(in(0, 0), 0.0);                      // the border is zero padding
  EXPECT_EQ(p.check_index.size(), p.output_size());  // points = 0: every element
}

}  // namespace
}  // namespace convtune
