// Depthwise convolutions (groups = C = K) built of depthwise microkernels
// (microkernels/CONTRACT.md "Depthwise microkernels"), every output element
// against the reference with guard zones (tests/kernel_harness.h): 3x3, 5x5
// and 7x7 filters at strides 1 and 2, same, asymmetric and no pads, C not a
// multiple of the lanes, dilation, a batch, epilogues and two threads, on
// each x86 ISA this CPU runs and on NEON (emulated off AArch64). Configurations come from the space the tuner
// searches (seeded), plus fixed ones with a K tail inside a multi-vector block.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "convtune/codegen/conv.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/core/shape.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/config.h"
#include "convtune/space/space.h"
#include "kernel_harness.h"
#include "test_util.h"

namespace convtune::depthwise_conv_test {
namespace {

// The shapes, C = K = groups (appended), with the epilogue each is checked with.
struct DwCase {
  const char* shape;
  Epilogue epilogue = Epilogue::none;
};
const DwCase kCases[] = {
    {"C=24,H=10,R=3"},                                             // MobileNet-v2's 3x3; 16 lanes: a tail of 8
    {"C=40,H=9,R=3,stride=2"},                                     // stride 2; 16 lanes: a tail of 8
    {"C=53,H=8,R=5"},                                              // 3*16+5 (6*8+5): a tail on every ISA
    {"C=32,H=11,R=5,stride=2"},                                    // EfficientNet's 5x5 at stride 2
    {"C=16,H=9,R=7"},                                              // ConvNeXt's 7x7
    {"C=24,H=9,R=7,stride=2"},                                     // 7x7 at stride 2
    {"C=32,H=8,R=3,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1"},    // TensorFlow's "same" at stride 2
    {"C=16,H=7,W=9,R=3,pad=0"},                                    // no padding, W != H
    {"C=16,H=9,R=3,dilation=2"},                                   // dilation
    {"N=2,C=24,H=6,R=3"},                                          // a batch
    {"C=24,H=6,R=3", Epilogue::bias_relu6},                        // MobileNet-v2's fused ReLU6
    {"C=40,H=7,R=5,stride=2", Epilogue::bias_add},                 // a residual, with the tail
    {"C=16,H=12,W=1,R=2,S=1,pad_t=1,pad_l=0,pad_b=0,pad_r=0"},      // benchdnn's 2x1: taps in a loop
    {"C=16,H=14,W=3,R=11,S=1,pad_h=5,pad_w=0"},                   // 11x1: r = 1 in the microkernel
    {"C=24,H=11,R=9"},                                             // 9x9: a 3x3 or smaller part in registers
};

Shape dw_shape(const std::string& text) {
  std::smatch m;  // K = groups = the C given
  if (!std::regex_search(text, m, std::regex("(^|,)C=([0-9]+)"))) throw Error("dw_shape: no C in " + text);
  return parse_shape(text + ",K=" + m[2].str() + ",groups=" + m[2].str());
}

class ConvDepthwise : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvDepthwise, SampledConfigurationsEqualTheReference) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  std::vector<test::ConvSpec> plain, fused;
  unsigned seed = 1;
  for (const DwCase& c : kCases) {
    const Shape sh = dw_shape(c.shape);
    for (const Config& cfg : test::sampled_configs(isa, sh, 2, 1, seed++))
      (c.epilogue == Epilogue::none ? plain : fused).push_back({sh, cfg, c.epilogue});
  }
  EXPECT_EQ(test::conv_failures(plain, test::check_convs(isa, plain)), "");
  EXPECT_EQ(test::conv_failures(fused, test::check_convs(isa, fused)), "");
}

// A block of several channel vectors whose last one is the masked tail,
// at the image border: every variant of one microkernel in one kernel.
TEST_P(ConvDepthwise, TailInsideAMultiVectorBlock) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  // 3x3 at pad 1 on 6x6: all nine border variants, in a source the C
  // compiler builds in seconds (5x5 has 25 variants of 25 taps each).
  const Shape sh = dw_shape("C=53,H=6,R=3");
  // Kp = 64 (4 vectors) on 16 lanes, 56 (7) on 8, 56 (14) on 4.
  const Config cfg = parse_config(isa.lanes == 16 ? "[T(6,h), T(2,w), T(1,c), U(3,s), U(3,r), U(3,w), U(4,k), V(k)]"
                                  : isa.lanes == 8 ? "[T(6,h), T(6,w), T(1,c), U(3,s), U(3,r), U(7,k), V(k)]"
                                                   : "[T(2,k), T(6,h), T(6,w), T(1,c), U(3,s), U(3,r), U(7,k), V(k)]");
  const std::vector<test::ConvSpec> specs{{sh, cfg}, {sh, cfg, Epilogue::bias_relu}};
  EXPECT_EQ(test::conv_failures({specs[0]}, test::check_convs(isa, {specs[0]})), "");
  EXPECT_EQ(test::conv_failures({specs[1]}, test::check_convs(isa, {specs[1]})), "");
  const GeneratedKernel k = generate_conv(isa, {sh, cfg, "ct_conv", "test", Epilogue::none});
  EXPECT_NE(k.c_source.find("ct_dwkernel_"), std::string::npos);
  EXPECT_EQ(k.c_source.find("ct_ukernel_"), std::string::npos);
  EXPECT_NE(k.header.find("kcrs [K][1][R][S] (depthwise, groups = C = K)"), std::string::npos) << k.header;
  EXPECT_EQ(k.packed_floats, sh.padded_K(isa.lanes) * sh.R * sh.S);
}

// --threads 2: the sampler's P over k, h or w, each output written by one thread.
TEST_P(ConvDepthwise, TwoThreadsEqualTheReference) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  if (test::emulated_here(isa)) GTEST_SKIP() << isa.name << " runs emulated here: its threads are not checked";
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; P needs 2";
  unsigned seed = 7;
  for (const char* text : {"C=32,H=8,R=3", "C=40,H=9,R=5,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1"}) {
    const Shape sh = dw_shape(text);
    for (const Config& cfg : test::sampled_configs(isa, sh, 2, 2, seed++)) {
      const test::ConvCheck r = test::check_conv(isa, sh, cfg, Epilogue::none, 2);
      EXPECT_EQ(r.status, Status::ok) << sh.to_string() << " " << to_string(cfg) << ": " << r.detail;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvDepthwise, ::testing::Values(std::string("avx512"), std::string("avx2")));
// NEON under qemu-aarch64 where this CPU is not AArch64 (kernel_harness.h):
// over two minutes of cross-compiling and emulation, so in the long tier
// (CMakeLists.txt CT_LONG_TESTS).
INSTANTIATE_TEST_SUITE_P(Emulated, ConvDepthwise, ::testing::Values(std::string("neon")));

// The whole tune of a MobileNet-style layer on AVX2 (any x86-64 host here):
// the space from the shipped table's depthwise classes, or, from a table made
// before the family, from the family's enumeration; a verified kernel at the end.
TEST(DepthwiseTune, EndsWithAVerifiedKernel) {
  if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU cannot run avx2";
  test::TempDir td;
  const test::CliResult r =
      test::run_cli("tune --arch avx2 --shape K=32,C=32,H=28,R=3,groups=32 --trials 2 --threads 1 --top 0 "
                    "--min-repeat-ms 1 --repeat 1 --no-onednn --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("\nverified: at every output element"), std::string::npos) << r.out;
  const std::vector<std::string> families =
      read_table(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json").families;
  const bool has_family = std::find(families.begin(), families.end(), "depthwise") != families.end();
  EXPECT_EQ(r.err.find("the class table has no depthwise microkernel that tiles this shape") == std::string::npos,
            has_family)
      << r.err;
}

}  // namespace
}  // namespace convtune::depthwise_conv_test
