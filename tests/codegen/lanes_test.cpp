// Lanes(g) (space/config.h): grouped convolutions with Cg = Kg channels per
// group, fewer than the lanes, computed by depthwise microkernels whose lanes
// span groups (microkernels/CONTRACT.md "Lanes(g)"). Every generated variant
// equals the reference at every output element with guard zones
// (tests/kernel_harness.h): groups of 2, 4 and 8 channels, K a whole number
// of vectors or not, strides 1 and 2, asymmetric pads, dilation, 5x5, a
// batch, epilogues and two threads, on each x86 ISA this CPU runs; and the
// file's text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convtune/codegen/conv.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/space/config.h"
#include "kernel_harness.h"
#include "test_util.h"

namespace convtune::lanes_test {
namespace {

struct LanesCase {
  const char* shape;
  Epilogue epilogue = Epilogue::none;
};
const LanesCase kCases[] = {
    {"K=64,C=64,H=8,R=3,groups=16"},                                        // ResNeXt's 4 per group
    {"K=32,C=32,H=9,R=3,stride=2,groups=8"},                                // stride 2
    {"K=40,C=40,H=7,R=3,groups=5"},                                         // 8 per group; 16 lanes: a tail of 8
    {"K=22,C=22,H=6,R=3,groups=11"},                                        // 2 per group, a tail on every ISA
    {"K=32,C=32,H=8,R=3,stride=2,pad_t=0,pad_l=0,pad_b=1,pad_r=1,groups=8"},  // asymmetric pads
    {"K=16,C=16,H=9,R=3,dilation=2,groups=4"},                              // dilation
    {"K=32,C=32,H=9,R=5,pad=2,groups=16"},                                  // 5x5, 2 per group
    {"N=2,C=32,K=32,H=6,R=3,groups=8"},                                     // a batch
    {"K=64,C=64,H=6,R=3,groups=16", Epilogue::bias_relu},
    {"K=40,C=40,H=7,R=3,stride=2,groups=10", Epilogue::bias_add},           // a residual, with the tail
};

// `n` Lanes(g) configurations of the tuner's space for the shape, seeded.
std::vector<Config> sampled(const Isa& isa, const Shape& sh, size_t n, int threads, unsigned seed) {
  return test::sampled_configs(isa, sh, n, threads, seed, [](const Config& c) { return c.lanes(); });
}

class ConvLanes : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvLanes, SampledConfigurationsEqualTheReference) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  std::vector<test::ConvSpec> plain, fused;
  unsigned seed = 1;
  size_t eligible = 0;
  for (const LanesCase& c : kCases) {
    const Shape sh = parse_shape(c.shape);
    if (!lanes_eligible(sh, isa.lanes)) continue;  // 8 per group fills AVX2's lanes: the g loop's case
    ++eligible;
    const std::vector<Config> cfgs = sampled(isa, sh, 2, 1, seed++);
    EXPECT_EQ(cfgs.size(), 2u) << sh.to_string();
    for (const Config& cfg : cfgs) (c.epilogue == Epilogue::none ? plain : fused).push_back({sh, cfg, c.epilogue});
  }
  EXPECT_GE(eligible, 8u);
  EXPECT_EQ(test::conv_failures(plain, test::check_convs(isa, plain)), "");
  EXPECT_EQ(test::conv_failures(fused, test::check_convs(isa, fused)), "");
}

// --threads 2: the sampler's P over k, h or w.
TEST_P(ConvLanes, TwoThreadsEqualTheReference) {
  const Isa isa = load_isa(GetParam());
  if (const std::string why = test::cannot_run(isa); !why.empty()) GTEST_SKIP() << why;
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; P needs 2";
  const Shape sh = parse_shape("K=64,C=64,H=8,R=3,groups=16");
  for (const Config& cfg : sampled(isa, sh, 2, 2, 11)) {
    const test::ConvCheck r = test::check_conv(isa, sh, cfg, Epilogue::none, 2);
    EXPECT_EQ(r.status, Status::ok) << to_string(cfg) << ": " << r.detail;
    EXPECT_NE(r.source.find("#pragma omp parallel for"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvLanes, ::testing::Values(std::string("avx512"), std::string("avx2")));

// The file: depthwise microkernels with the ISA's shuffle, every output's
// Cg inputs packed with its taps, ONNX's grouped weights in.
TEST(ConvLanesText, ShuffleAndLayouts) {
  const Isa isa = load_isa("avx512");
  CodegenInput in;
  in.shape = parse_shape("K=40,C=40,H=7,R=3,groups=10");  // Cg = Kg = 4, Kp = 48
  in.config = parse_config("[Lanes(g), T(7,h), T(7,w), T(3,k), T(1,c), U(3,s), U(3,r), V(k)]");
  in.function_name = "f";
  const GeneratedKernel k = generate_conv(isa, in);
  EXPECT_EQ(k.packed_floats, 48 * 4 * 3 * 3);
  EXPECT_NE(k.c_source.find("ct_dwkernel_"), std::string::npos);
  EXPECT_NE(k.c_source.find("static const int ct_lb[16] = {0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12};"),
            std::string::npos)
      << k.c_source;
  EXPECT_NE(k.c_source.find("_mm512_permutexvar_ps(ct_li, "), std::string::npos);
  EXPECT_NE(k.c_source.find("(input, io, wp, op, 4, acc);"), std::string::npos) << "Cg c steps a call";
  EXPECT_NE(k.c_source.find("kcrs[((k * 4 + c) * 3 + r) * 3 + s]"), std::string::npos);
  EXPECT_NE(k.header.find("weights [K][C/groups][R][S] = [40][4][3][3]"), std::string::npos) << k.header;
  EXPECT_NE(k.header.find("[Kp/16][Cg][R][S][16], Kp = 48, Cg = 4 (Lanes(g)"), std::string::npos);
  EXPECT_NE(k.header.find("kcrs [K][C/G][R][S]"), std::string::npos);
  EXPECT_NE(k.header.find("#define F_GROUPS 10"), std::string::npos);
}

// An ISA without the lane_groups block (NEON's) has no Lanes(g): one line.
TEST(ConvLanesText, AnIsaWithoutTheShuffleSaysSo) {
  const Isa isa = load_isa("neon");
  ASSERT_TRUE(isa.lane_permute.empty());
  CodegenInput in;
  in.shape = parse_shape("K=8,C=8,H=6,R=3,groups=4");  // Cg = 2 of NEON's 4 lanes
  in.config = parse_config("[Lanes(g), T(6,h), T(6,w), T(2,k), T(1,c), U(3,s), U(3,r), V(k)]");
  in.function_name = "f";
  EXPECT_EQ(test::error_of([&] { generate_conv(isa, in); }),
            "config: Lanes(g) needs the ISA's lane_groups block, which neon has not; drop Lanes(g)");
}

}  // namespace
}  // namespace convtune::lanes_test
