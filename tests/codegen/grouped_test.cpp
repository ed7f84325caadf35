// Grouped convolutions (config.h g): every generated variant equals the
// reference at every output element with guard zones (tests/kernel_harness.h)
// over groups of 2, 4, 8, 32 and 55 channels, Kg and Cg not multiples of the
// lanes, strides 1 and 2, symmetric and asymmetric pads, a depthwise shape
// with a channel multiplier, epilogues, and P over g on two threads; and
// the grouped text of the generated file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convtune/codegen/conv.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/execution/runner.h"
#include "convtune/space/config.h"
#include "kernel_harness.h"
#include "test_util.h"

namespace convtune::grouped_test {
namespace {

struct GroupCase {
  const char* shape;
  bool taps;
  int64_t c_outer = 1;
  const char* tail = "";  // the configuration's switches: ", Pf(w)", ", Nt(o)"
};

// Channels per group: 2, 4, 12 outputs of 8 inputs, 32, 55, 4 of 32 groups
// (ResNeXt's cardinality), 2 outputs of 1 input (depthwise, multiplier 2),
// 1x1 grouped at stride 2.
const GroupCase kCases[] = {
    {"K=8,C=8,H=6,R=3,groups=4", true},
    {"K=16,C=16,H=7,R=3,stride=2,groups=4", true},
    {"K=16,C=16,H=9,R=3,stride=2,groups=4", false, 2, ", Pf(w)"},
    {"K=24,C=16,H=6,R=3,pad=0,groups=2", true},
    {"K=64,C=64,H=4,R=3,groups=2", true, 1, ", Nt(o)"},
    {"K=110,C=110,H=4,R=3,groups=2", true},
    {"K=110,C=110,H=5,R=3,stride=2,groups=2", false, 5},
    {"K=128,C=128,H=4,R=3,groups=32", true, 1, ", Pf(o)"},
    {"K=20,C=10,H=7,R=3,pad_t=0,pad_l=0,pad_b=1,pad_r=1,stride=2,groups=5", true},
    {"K=20,C=10,H=6,W=7,R=3,S=5,pad_t=1,pad_l=2,pad_b=0,pad_r=1,groups=5", false},
    {"K=16,C=8,H=6,R=3,groups=8", true},
    {"K=24,C=12,H=6,R=1,stride=2,pad=0,groups=3", false},
};

class ConvGrouped : public ::testing::TestWithParam<std::string> {};

// One driver per ISA and per signature: the cases without an epilogue, then
// with each epilogue on a few of them (bias per real channel g*Kg + k).
TEST_P(ConvGrouped, EqualsReferenceEverywhereWithGuardZones) {
  const Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  std::vector<test::ConvSpec> plain, fused;
  for (const GroupCase& c : kCases) {
    const Shape shape = parse_shape(c.shape);
    plain.push_back({shape, test::blocked_config(shape, isa.lanes, c.taps, c.c_outer, "R(g)", c.tail)});
  }
  const Epilogue eps[] = {Epilogue::bias, Epilogue::bias_relu, Epilogue::bias_add};
  const size_t fused_cases[] = {1, 4, 8};  // stride 2, Nt(o) with 32 per group, asymmetric pads
  for (size_t i = 0; i < 3; ++i) {
    const GroupCase& c = kCases[fused_cases[i]];
    const Shape shape = parse_shape(c.shape);
    fused.push_back({shape, test::blocked_config(shape, isa.lanes, c.taps, c.c_outer, "R(g)"), eps[i]});
  }
  for (const auto* specs : {&plain, &fused}) {
    const auto checked = test::check_convs(isa, *specs);
    for (size_t i = 0; i < specs->size(); ++i) {
      const auto& k = (*specs)[i];
      const auto& r = checked[i];
      EXPECT_EQ(r.status, Status::ok) << to_string(k.epilogue) << " " << to_string(k.cfg) << " on "
                                      << k.shape.to_string() << ": " << r.detail << "\n"
                                      << r.source.substr(r.source.find("void ct_conv("), 3000);
    }
  }
}

// P over g (the groups split between the threads, each with its own
// contiguous share), an uneven P(n,g,t), and P inside a group below R(g).
TEST_P(ConvGrouped, EqualsReferenceEverywhereOnTwoThreads) {
  const Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name;
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only " << available_cpus() << " CPU; P needs 2";
  struct Par {
    const char* shape;
    const char* outer;  // blocked_config's, or a whole configuration ('[')
  };
  const Par cases[] = {
      {"K=16,C=16,H=7,R=3,stride=2,groups=4", "P(2,g), R(g)"},
      {"K=110,C=110,H=4,R=3,groups=2", "P(2,g)"},
      {"K=20,C=10,H=6,R=3,groups=5", "P(5,g,2)"},
      // Kg = Cg = 4: one vector of k on either ISA.
      {"K=128,C=128,H=4,R=3,groups=32", "[R(g), P(2,h), T(2,w), T(2,c), U(3,s), U(3,r), U(2,c), U(2,w), U(2,h), V(k)]"},
  };
  for (const Par& c : cases) {
    const Shape shape = parse_shape(c.shape);
    const Config cfg = c.outer[0] == '[' ? parse_config(c.outer) : test::blocked_config(shape, isa.lanes, true, 1, c.outer);
    const auto r = test::check_conv(isa, shape, cfg, Epilogue::bias_relu, 2);
    EXPECT_EQ(r.status, Status::ok) << to_string(cfg) << " on " << c.shape << ": " << r.detail << "\n"
                                    << r.source.substr(r.source.find("void ct_conv("), 3000);
    EXPECT_NE(r.source.find("#pragma omp parallel for"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, ConvGrouped, ::testing::Values(std::string("avx512"), std::string("avx2")));

// The file says the grouped layouts; each call moves by its group's channels
// and packed block; the packing runs per group from ONNX's [K][C/groups][R][S].
TEST(ConvGroupedText, GroupLoopOffsetsAndLayouts) {
  const Isa isa = load_isa("avx2");
  CodegenInput in;
  in.shape = parse_shape("K=24,C=16,H=6,R=3,groups=2");  // Kg = 12 (a tail of 4 lanes), Cg = 8
  in.config = test::blocked_config(in.shape, isa.lanes, true, 1, "R(g)");
  in.function_name = "f";
  const GeneratedKernel k = generate_conv(isa, in);
  // Kgp = 16: 2 groups of 16 * 8 * 3 * 3 packed floats.
  EXPECT_EQ(k.packed_floats, 2 * 16 * 8 * 9);
  EXPECT_EQ(packed_weight_floats(in.shape, isa.lanes), 2 * 16 * 8 * 9);
  EXPECT_NE(k.c_source.find("for (long g1 = 0; g1 < 2; ++g1) {  /* R(g) */"), std::string::npos) << k.c_source;
  EXPECT_NE(k.c_source.find("const long g = g1;"), std::string::npos);
  EXPECT_NE(k.c_source.find("+ c + g * 8;"), std::string::npos);
  EXPECT_NE(k.c_source.find("+ g * 1152;"), std::string::npos);
  EXPECT_NE(k.c_source.find("+ k + g * 12;"), std::string::npos);
  EXPECT_NE(k.c_source.find("for (long g = 0; g < 2; ++g)"), std::string::npos);
  EXPECT_NE(k.c_source.find("kcrs[(((g * 12 + k) * 8 + c) * 3 + r) * 3 + s]"), std::string::npos);
  // One k block of 16 per group, 12 of them real: every call is the K tail variant.
  EXPECT_NE(k.c_source.find("k lanes 12 */"), std::string::npos) << "the K tail of each group";
  EXPECT_NE(k.header.find("weights [K][C/G][R][S] = [24][8][3][3]"), std::string::npos) << k.header;
  EXPECT_NE(k.header.find("[G][Kgp/16][Cg/2][R][S][2][16], G = 2 groups of Cg = 8 inputs"), std::string::npos);
  EXPECT_NE(k.header.find("kcrs [K][C/G][R][S]"), std::string::npos);
  EXPECT_NE(k.header.find("#define F_GROUPS 2"), std::string::npos);
}

}  // namespace
}  // namespace convtune::grouped_test
