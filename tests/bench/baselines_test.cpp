// The library baselines on every kind of convolution the shape model has:
// groups (weights [K][C/groups][R][S]), depthwise with and without a channel
// multiplier, dilation, per-axis strides and per-side pads, each equal to the
// reference at every output element through the one output check. A baseline
// whose library is not in this build skips with its reason; one whose API
// cannot express a shape is left out with its one-line reason.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convtune/baselines/baseline.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/shape.h"
#include "convtune/execution/output_check.h"
#include "convtune/execution/runner.h"

namespace convtune::baselines_test {
namespace {

using Make = std::function<std::unique_ptr<Baseline>(const ProblemData&, std::string*, int)>;

// Small shapes, one kind each and some mixed (parse_shape's text form).
const std::vector<std::string> kGrouped = {
    "K=8,C=12,H=7,R=3,groups=4",                 // 3 input and 2 output channels per group
    "K=8,C=8,H=5,R=1,groups=2",                  // 1x1: im2col's GEMM straight on the input
    "K=16,C=16,H=8,R=3,groups=16",               // depthwise
    "N=2,K=16,C=8,H=9,W=6,R=3,stride=2,groups=8"  // depthwise, channel multiplier 2, a batch
};
const std::vector<std::string> kDilated = {
    "K=8,C=4,H=9,R=3,dilation=2",                                  // "same" pads of 2
    "K=8,C=4,H=11,W=9,R=3,S=2,dilation_h=3,dilation_w=2,pad=0",  // per-axis dilation, no pad
};
const std::vector<std::string> kGeometry = {
    "K=8,C=4,H=7,W=6,R=3,pad_t=0,pad_l=1,pad_b=2,pad_r=0",       // asymmetric pads
    "K=8,C=4,H=9,W=8,R=3,stride_h=2,stride_w=1,pad_h=1,pad_w=0",  // per-axis strides and pads
    "N=2,K=12,C=6,H=8,W=7,R=2,S=3,stride=2,pad_t=1,pad_l=0,pad_b=0,pad_r=2",
};
// Everything at once: groups, dilation, per-axis strides, asymmetric pads.
const std::string kMixed = "N=2,K=6,C=6,H=8,W=7,R=3,S=2,stride_h=1,stride_w=2,pad_t=2,pad_l=0,pad_b=1,pad_r=1,"
                           "dilation=2,groups=3";

std::vector<std::string> all_shapes() {
  std::vector<std::string> v = kGrouped;
  v.insert(v.end(), kDilated.begin(), kDilated.end());
  v.insert(v.end(), kGeometry.begin(), kGeometry.end());
  v.push_back(kMixed);
  return v;
}

// "" when `make` is in this build (checked on a plain shape), else why not.
std::string not_built(const Make& make) {
  std::string missing;
  if (make(ProblemData::make(parse_shape("K=8,C=8,H=4,R=1"), 0, 7), &missing, 1)) return "";
  return missing;
}

// The baseline on `shape` (with `e`) agrees with the reference at every
// output element; two calls, as bench times it after the check.
void expect_reference(const Make& make, const std::string& shape, Epilogue e = Epilogue::none) {
  SCOPED_TRACE(shape + " epilogue " + to_string(e));
  ProblemData p = ProblemData::make(parse_shape(shape), 0, 7, e);  // 0: every output element
  std::string missing;
  std::unique_ptr<Baseline> b = make(p, &missing, 1);
  ASSERT_TRUE(b) << missing;
  b->run();
  EXPECT_EQ(check_output(p, b->output(), b->impl(), "-"), "");
  if (has_residual(e)) return;  // oneDNN's sum post-op accumulates: only the first run is the reference
  b->run();
  EXPECT_EQ(check_output(p, b->output(), b->impl(), "-"), "");
}

TEST(Baselines, OnednnTakesEveryConvolution) {
  const Make make = [](const ProblemData& p, std::string* m, int t) { return make_onednn(p, m, t); };
  if (std::string why = not_built(make); !why.empty()) GTEST_SKIP() << why;
  for (const auto& s : all_shapes()) expect_reference(make, s);
  for (Epilogue e : {Epilogue::bias_relu, Epilogue::bias_add}) expect_reference(make, kMixed, e);
}

TEST(Baselines, Im2colBlasTakesEveryConvolution) {
  const Make make = [](const ProblemData& p, std::string* m, int t) { return make_im2col_blas(p, m, t); };
  if (std::string why = not_built(make); !why.empty()) GTEST_SKIP() << why;
  for (const auto& s : all_shapes()) expect_reference(make, s);
  for (Epilogue e : {Epilogue::bias_relu, Epilogue::bias_add}) expect_reference(make, kMixed, e);
}

TEST(Baselines, XnnpackTakesEveryConvolution) {
  const Make make = [](const ProblemData& p, std::string* m, int t) { return make_xnnpack(p, m, t); };
  if (std::string why = not_built(make); !why.empty()) GTEST_SKIP() << why;
  for (const auto& s : all_shapes()) expect_reference(make, s);
  expect_reference(make, kMixed, Epilogue::bias_relu6);
  // A pool of two threads splits the groups among them: the same output.
  const Make two = [](const ProblemData& p, std::string* m, int) { return make_xnnpack(p, m, 2); };
  expect_reference(two, kGrouped[3]);
}

// LIBXSMM 1.17's descriptor has per-axis strides and pads (asymmetric ones
// through a padded input) but no groups and no dilation: left out, one line.
TEST(Baselines, LibxsmmTakesWhatItsApiCanAndSaysWhyNot) {
  const Make make = [](const ProblemData& p, std::string* m, int t) { return make_libxsmm(p, m, t); };
  if (std::string why = not_built(make); !why.empty()) GTEST_SKIP() << why;
  for (const auto& s : kGeometry) expect_reference(make, s);
  for (const auto& s : kGrouped) {
    std::string missing;
    EXPECT_FALSE(make(ProblemData::make(parse_shape(s), 0, 7), &missing, 1)) << s;
    EXPECT_EQ(missing, "LIBXSMM 1.17's convolution has no groups; it is left out for " + parse_shape(s).to_string());
  }
  for (const auto& s : kDilated) {
    std::string missing;
    EXPECT_FALSE(make(ProblemData::make(parse_shape(s), 0, 7), &missing, 1)) << s;
    EXPECT_EQ(missing, "LIBXSMM 1.17's convolution has no dilation; it is left out for " + parse_shape(s).to_string());
  }
}

}  // namespace
}  // namespace convtune::baselines_test
