// Depthwise microkernels (microkernels/CONTRACT.md "Depthwise microkernels")
// against the contract's scalar reference, ct_ref_dwkernel, with 64 guard
// floats after every buffer (tests/kernel_harness.h check_ukernels): a sample
// of the family's sizes of every filter, at strides 1 and 2 and dilations 1
// to 3 per axis, with gaps between pixels, rows and taps so that no stride
// can be silently wrong. (Border, tail and epilogue variants: the whole
// convolutions of tests/codegen/depthwise_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/ukernel/codegen.h"
#include "convtune/ukernel/ukernel.h"
#include "kernel_harness.h"

namespace convtune::depthwise_ukernel_test {
namespace {

// The i-th case's layout: C wider than the block (5 channels past it), every
// stride padded; the weights' c step WIT of 1 float (any stride is legal).
UkLayout dw_layout(const UkSizes& u, int lanes, size_t i) {
  UkLayout l;
  l.stride = 1 + int(i % 2);
  l.stride_w = 1 + int((i / 2) % 2);
  l.dil_h = 1 + int((i / 3) % 3);
  l.dil_w = 1 + int((i / 4) % 2);
  const int64_t kv = int64_t(u.k) * lanes;
  l.in_pix = kv + 5;
  l.in_row = ((u.w - 1) * l.stride_w + (u.s - 1) * l.dil_w + 3) * l.in_pix;
  l.w_s = kv + 3;
  l.w_r = u.s * l.w_s + 7;
  l.w_c = 0;  // unused: c is 1
  l.w_it = 1;
  l.out_pix = kv + 8;
  l.out_row = u.w * l.out_pix + 32;
  return l;
}

class UkernelDepthwise : public ::testing::TestWithParam<const char*> {};

TEST_P(UkernelDepthwise, SampleMatchesScalarReference) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  // Per filter (3x3, 5x5, 7x7, 1x1 and the non-square 1x3, 3x1): six sizes
  // spread over the family's order, its first and its last (the largest blocks).
  std::vector<UkSizes> sample;
  for (auto [r, s] : {std::pair{3, 3}, {5, 5}, {7, 7}, {1, 1}, {1, 3}, {3, 1}}) {
    std::vector<UkSizes> f;
    for (const UkSizes& u : enumerate_ukernels(isa, "depthwise"))
      if (u.r == r && u.s == s) f.push_back(u);
    ASSERT_GE(f.size(), 8u) << r << "x" << s;
    for (size_t i = 0; i < f.size(); i += f.size() / 6) sample.push_back(f[i]);
    sample.push_back(f.back());
  }
  std::vector<UkCase> cases;
  for (size_t i = 0; i < sample.size(); ++i) cases.push_back({sample[i], dw_layout(sample[i], isa.lanes, i)});
  const auto checked = test::check_ukernels(isa, cases);
  ASSERT_EQ(checked.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(checked[i].status, Status::ok) << ukernel_name(cases[i].u, isa.name) << ": " << checked[i].detail;
}

// NEON under qemu-aarch64 off AArch64, through the driver's ukernels mode (check_ukernels).
INSTANTIATE_TEST_SUITE_P(Isas, UkernelDepthwise, ::testing::Values("avx512", "avx2", "neon"));

}  // namespace
}  // namespace convtune::depthwise_ukernel_test
