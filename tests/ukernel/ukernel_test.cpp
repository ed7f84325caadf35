// Microkernel names and the offline space of microkernels/CONTRACT.md.
// (Generated microkernels against the scalar reference, and the flags'
// assembly: ukernel_codegen_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "convtune/core/error.h"
#include "convtune/core/shape.h"
#include "convtune/core/isa.h"
#include "convtune/offline/profile.h"
#include "convtune/ukernel/ukernel.h"
#include "convtune/ukernel/codegen.h"
#include "test_util.h"

namespace convtune::ukernel_test {
namespace {

TEST(UkernelName, RoundTrip) {
  UkSizes u{2, 1, 12, 1, 1, 1};
  EXPECT_EQ(ukernel_name(u, "avx512"), "ct_ukernel_k2c1w12h1r1s1__avx512");
  UkSizes v;
  std::string isa;
  ASSERT_TRUE(parse_ukernel_name("ct_ukernel_k3c16w1h5r7s1__neon", &v, &isa));
  EXPECT_EQ(v, (UkSizes{3, 16, 1, 5, 7, 1}));
  EXPECT_EQ(isa, "neon");
}

TEST(UkernelName, RejectsMalformed) {
  UkSizes v;
  std::string isa;
  for (const char* bad : {"ct_ukernel_k2c1w12h1r1__avx512", "ct_ukernel_k2c1w12h1r1s1", "ukernel_k2c1w12h1r1s1__x",
                          "ct_ukernel_k0c1w12h1r1s1__avx512", "ct_ukernel_k02c1w12h1r1s1__avx512",
                          "ct_ukernel_k2c1w12h1r1s1x__avx512", "ct_ukernel_k2c1w12h1r1s1__"})
    EXPECT_FALSE(parse_ukernel_name(bad, &v, &isa)) << bad;
}

TEST(UkernelSpace, Avx512ConstraintsGive2043) {
  Isa isa = load_isa("avx512");
  auto all = enumerate_ukernels(isa, "paper");
  // 000 §4.1 says 3059; the printed constraints give 2043 (see the issue).
  EXPECT_EQ(all.size(), 2043u);
  std::set<std::pair<int, int>> rs;
  for (const auto& u : all) {
    EXPECT_TRUE(family_admits(isa, "paper", u));
    EXPECT_EQ(ukernel_family(isa, u), "paper");
    EXPECT_GE(u.out_regs(), 14);
    EXPECT_LE(u.out_regs(), 28);
    EXPECT_LE(u.out_regs() + u.weight_regs(), 36);
    rs.insert({u.r, u.s});
  }
  // 5x5 and 7x7 need r*s*c*k >= 25 > 22 and cannot fit the budget.
  EXPECT_EQ(rs, (std::set<std::pair<int, int>>{{1, 1}, {1, 3}, {3, 1}, {1, 5}, {5, 1}, {1, 7}, {7, 1}, {3, 3}}));
  EXPECT_TRUE(ukernel_admitted(isa, UkSizes{2, 1, 12, 1, 1, 1}));  // the BLIS kernel
  EXPECT_FALSE(ukernel_admitted(isa, UkSizes{2, 1, 15, 1, 1, 1}));  // 30 accumulators
  EXPECT_FALSE(ukernel_admitted(isa, UkSizes{1, 1, 14, 1, 3, 5}));  // r != s
}

// The two families' rules as microkernels/CONTRACT.md states them, written
// again here so that the counts do not come from the code under test.
struct Bounds {
  int out_min, out_max, total_min, total_max, registers, broadcast, reread;
};
bool paper_rule(const Bounds& b, int k, int c, int w, int h, int r, int s) {
  const int out = w * h * k, total = out + r * s * c * k;
  return (r == 1 || s == 1 || r == s) && out >= b.out_min && out <= b.out_max && total >= b.total_min &&
         total <= b.total_max;
}
bool taps_rule(const Bounds& b, int k, int c, int w, int h, int r, int s) {
  const int out = w * h * k;
  return r == s && r > 1 && (c == 1 || c == 2 || c == 4) && (c == 1 || r * s * c <= 36) && out >= b.out_min &&
         out <= b.out_max && out + std::max(1, k - b.reread) + b.broadcast <= b.registers;
}

struct FamilyCounts {
  const char* isa;
  Bounds bounds;
  size_t paper, taps;  // taps: admitted by the taps rule alone (paper comes first)
};

void PrintTo(const FamilyCounts& f, std::ostream* os) { *os << f.isa; }

class UkernelFamilies : public ::testing::TestWithParam<FamilyCounts> {};

TEST_P(UkernelFamilies, CountsMatchTheStatedRules) {
  const FamilyCounts& want = GetParam();
  Isa isa = load_isa(want.isa);
  std::vector<UkSizes> paper, taps;
  size_t both = 0;
  for (int r : {1, 3, 5, 7})
    for (int s : {1, 3, 5, 7})
      for (int k = 1; k <= 16; ++k)
        for (int c = 1; c <= 16; ++c)
          for (int w = 1; w <= 16; ++w)
            for (int h = 1; h <= 16; ++h) {
              const bool p = paper_rule(want.bounds, k, c, w, h, r, s), t = taps_rule(want.bounds, k, c, w, h, r, s);
              if (p) paper.push_back({k, c, w, h, r, s});
              if (t && !p) taps.push_back({k, c, w, h, r, s});
              both += p && t;
            }
  EXPECT_EQ(paper.size(), want.paper);
  EXPECT_EQ(taps.size(), want.taps);
  EXPECT_GT(both, 0u);  // some microkernels fit both rules and count as paper
  auto sorted = [](std::vector<UkSizes> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(enumerate_ukernels(isa, "paper")), sorted(paper));
  EXPECT_EQ(sorted(enumerate_ukernels(isa, "taps")), sorted(taps));
  EXPECT_TRUE(enumerate_ukernels(isa, "nosuchfamily").empty());
  // The union: the paper family in its order, then the taps family.
  std::vector<UkSizes> all = enumerate_ukernels(isa), expect = enumerate_ukernels(isa, "paper");
  for (const auto& u : enumerate_ukernels(isa, "taps")) expect.push_back(u);
  EXPECT_EQ(all, expect);
  for (const auto& u : paper) EXPECT_EQ(ukernel_family(isa, u), "paper") << sizes_text(u);
  for (const auto& u : taps) {
    EXPECT_EQ(ukernel_family(isa, u), "taps") << sizes_text(u);
    EXPECT_TRUE(ukernel_admitted(isa, u)) << sizes_text(u);
    EXPECT_FALSE(family_admits(isa, "paper", u)) << sizes_text(u);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, UkernelFamilies,
                         ::testing::Values(FamilyCounts{"avx512", {14, 28, 16, 36, 32, 0, 0}, 2043, 538},
                                           FamilyCounts{"avx2", {7, 14, 8, 18, 16, 1, 1}, 500, 246},
                                           FamilyCounts{"neon", {14, 28, 16, 36, 32, 1, 0}, 2043, 513}),
                         [](const auto& info) { return std::string(info.param.isa); });

TEST(UkernelFamilies, ConcreteMicrokernels) {
  Isa isa = load_isa("avx512");
  // A whole 3x3 filter in registers: 28 accumulators + 2 weight vectors = 30
  // registers (AVX-512 reserves no register for the broadcast), but the paper counts 28 +
  // 18 weights > 36.
  const UkSizes taps{2, 1, 7, 2, 3, 3};
  EXPECT_EQ(ukernel_family(isa, taps), "taps");
  EXPECT_FALSE(family_admits(isa, "paper", taps));
  EXPECT_TRUE(family_admits(isa, "taps", taps));
  EXPECT_TRUE(ukernel_admitted(isa, taps));
  EXPECT_EQ(ukernel_name(taps, isa.name), "ct_ukernel_k2c1w7h2r3s3__avx512");  // the naming scheme is unchanged
  EXPECT_EQ(ukernel_family(isa, UkSizes{2, 1, 12, 1, 1, 1}), "paper");
  EXPECT_FALSE(family_admits(isa, "taps", UkSizes{2, 1, 12, 1, 1, 1}));  // no whole filter
  // Fits both rules: reported as the first family, paper.
  EXPECT_TRUE(family_admits(isa, "taps", UkSizes{1, 1, 14, 1, 3, 3}));
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 1, 14, 1, 3, 3}), "paper");
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 1, 14, 1, 7, 7}), "taps");  // 7x7, c = 1: always allowed
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 4, 14, 1, 3, 3}), "taps");  // 3*3*4 = 36 taps
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 3, 14, 1, 3, 3}), "");      // c = 3 is not in c_values
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 2, 14, 1, 5, 5}), "");      // 5*5*2 = 50 taps > 36
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 1, 14, 1, 3, 5}), "");      // not square
  EXPECT_EQ(ukernel_family(isa, UkSizes{16, 1, 1, 1, 3, 3}), "taps");  // 16 + 16 = 32 registers
  EXPECT_EQ(ukernel_family(isa, UkSizes{4, 2, 7, 1, 3, 3}), "taps");   // 28 + 4 = 32
  EXPECT_EQ(ukernel_family(isa, UkSizes{8, 1, 2, 1, 3, 3}), "taps");   // 16 + 8 = 24
  EXPECT_EQ(ukernel_family(isa, UkSizes{7, 1, 4, 1, 3, 3}), "");       // 28 + 7 = 35
  // NEON needs a register for the input element: 28 + 4 + 1 = 33.
  EXPECT_EQ(ukernel_family(load_isa("neon"), UkSizes{4, 2, 7, 1, 3, 3}), "");
  EXPECT_EQ(ukernel_family(load_isa("neon"), UkSizes{15, 1, 1, 1, 3, 3}), "taps");  // 15 + 15 + 1 = 31
  EXPECT_EQ(ukernel_family(isa, UkSizes{1, 1, 29, 1, 3, 3}), "");      // 29 accumulators
  EXPECT_EQ(ukernel_families(), (std::vector<std::string>{"paper", "taps"}));
}

// profile --quick measures every family: each (family, r, s) group's edges.
TEST(UkernelFamilies, QuickSubsetCoversBothFamilies) {
  for (const char* name : {"avx512", "avx2"}) {
    Isa isa = load_isa(name);
    std::map<std::string, std::set<std::pair<int, int>>> rs;
    for (const auto& u : quick_subset(isa)) rs[ukernel_family(isa, u)].insert({u.r, u.s});
    EXPECT_EQ(rs["taps"], (std::set<std::pair<int, int>>{{3, 3}, {5, 5}, {7, 7}})) << name;
    EXPECT_TRUE(rs["paper"].count({1, 1})) << name;
    EXPECT_FALSE(rs.count("")) << name;
  }
}

TEST(Isa, UnknownArchIsAClearError) {
  try {
    load_isa("avx1024");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown --arch 'avx1024'; choose one of: avx512, avx2, neon");
  }
}

TEST(Isa, BadDescriptionNamesTheKey) {
  try {
    parse_isa(R"({"name":"x","lanes":4})", "x.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ISA description x.json: key 'vector_registers' is missing");
  }
}

// CONTRACT.md "Depthwise microkernels": a name of its own, read back with the family.
TEST(DepthwiseUkernel, NameIsItsOwnAndRoundTrips) {
  UkSizes u{2, 1, 4, 1, 3, 3, true};
  EXPECT_EQ(ukernel_name(u, "avx512"), "ct_dwkernel_k2c1w4h1r3s3__avx512");
  EXPECT_EQ(sizes_text(u), "k2c1w4h1r3s3");  // the configuration's U sizes, as for a dense one
  UkSizes v;
  std::string isa;
  ASSERT_TRUE(parse_ukernel_name("ct_dwkernel_k2c1w4h1r3s3__avx512", &v, &isa));
  EXPECT_EQ(v, u);
  EXPECT_EQ(isa, "avx512");
  ASSERT_TRUE(parse_ukernel_name("ct_ukernel_k2c1w4h1r3s3__avx512", &v, &isa));
  EXPECT_FALSE(v.dw);
  EXPECT_NE(v, u);  // the same unroll factors name two microkernels
  EXPECT_FALSE(parse_ukernel_name("ct_dwkernel_k2c1w4h1r3__avx512", &v, &isa));
}

// The family's rule is the ISA's depthwise_space: w*h*k + max(1, k - reread) + input registers
// within the register file, c = 1, r and s from rs_values; no dense family admits one.
TEST(DepthwiseUkernel, FamilyRuleIsTheIsaData) {
  const Isa avx2 = load_isa("avx2"), avx512 = load_isa("avx512");
  EXPECT_EQ(ukernel_family(avx2, UkSizes{1, 1, 14, 1, 3, 3, true}), "depthwise");  // 14 + 1 + 1 = 16
  EXPECT_EQ(ukernel_family(avx2, UkSizes{1, 1, 15, 1, 3, 3, true}), "");           // 15 > output_regs 14
  EXPECT_EQ(ukernel_family(avx2, UkSizes{2, 1, 3, 2, 5, 5, true}), "depthwise");   // 12 + 2 + 1 = 15
  EXPECT_EQ(ukernel_family(avx2, UkSizes{2, 1, 7, 1, 3, 3, true}), "");            // 14 + 2 + 1 = 17
  EXPECT_EQ(ukernel_family(avx512, UkSizes{4, 1, 7, 1, 7, 7, true}), "depthwise"); // 28 + 4 + 0 = 32
  EXPECT_EQ(ukernel_family(avx512, UkSizes{1, 2, 7, 1, 3, 3, true}), "");          // c is 1
  EXPECT_EQ(ukernel_family(avx512, UkSizes{1, 1, 1, 1, 9, 9, true}), "");          // 9 not in rs_values
  EXPECT_EQ(ukernel_family(avx512, UkSizes{1, 1, 1, 1, 1, 3, true}), "depthwise"); // r and s apart
  for (const std::string& f : ukernel_families()) EXPECT_FALSE(family_admits(avx512, f, UkSizes{2, 1, 7, 1, 3, 3, true})) << f;
  // The dense space (what profile measures) holds none; the family's own enumeration only such.
  for (const UkSizes& u : enumerate_ukernels(avx512)) ASSERT_FALSE(u.dw);
  const std::vector<UkSizes> dw = enumerate_ukernels(avx2, "depthwise");
  ASSERT_FALSE(dw.empty());
  for (const UkSizes& u : dw) {
    EXPECT_TRUE(u.dw && u.c == 1);
    EXPECT_LE(u.out_regs() + u.k + 1, avx2.vector_registers) << sizes_text(u);
  }
  EXPECT_TRUE(depthwise_shape(parse_shape("K=32,C=32,H=8,R=3,groups=32")));
  EXPECT_FALSE(depthwise_shape(parse_shape("K=64,C=32,H=8,R=3,groups=32")));  // channel multiplier 2
  EXPECT_FALSE(depthwise_shape(parse_shape("K=32,C=32,H=8,R=3,groups=4")));
  EXPECT_FALSE(depthwise_shape(parse_shape("K=32,C=32,H=8,R=3")));
}

// The generated code reads the input as vectors at the block's channels
// (masked in the C tail, as the store), never broadcasts, and keeps io fixed
// over its c steps (CONTRACT.md "Depthwise microkernels"); text only, every ISA.
TEST(DepthwiseUkernel, LoadsInputVectorsNotBroadcasts) {
  for (const char* name : {"avx512", "avx2", "neon"}) {
    const Isa isa = load_isa(name);
    const UkSizes u{2, 1, 3, 1, 3, 3, true};
    UkVariant tail;
    tail.k_lanes = isa.lanes + 3;
    for (const UkVariant& v : {UkVariant{}, tail}) {
      const std::string code = emit_ukernel(isa, u, profile_layout(u, isa.lanes, 4), "uk", v);
      EXPECT_EQ(code.find("I[io"), std::string::npos) << name << code;  // a dense one broadcasts I[io + ...]
      const std::string second = "I + io + " + std::to_string(isa.lanes);
      EXPECT_NE(code.find(v.k_lanes ? load_lanes(isa, second, 3) : load_lanes(isa, second, isa.lanes)),
                std::string::npos)
          << name << code;
      EXPECT_EQ(code.find("io +="), std::string::npos) << name << code;
      EXPECT_NE(code.find("uk: depthwise, sizes"), std::string::npos) << name << code;
    }
  }
}

// A missing or bad key of depthwise_space is one line naming it with its block.
TEST(DepthwiseUkernel, BadDepthwiseSpaceNamesTheKey) {
  auto err = [](const std::function<void(nlohmann::json&)>& edit) { return test::edited_isa_error("avx2", edit); };
  EXPECT_EQ(err([](auto&) {}), "no error");
  EXPECT_EQ(err([](auto& j) { j.erase("depthwise_space"); }), "ISA description x.json: key 'depthwise_space' is missing");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"] = 3; }),
            "ISA description x.json: key 'depthwise_space' has the wrong type");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"].erase("rs_values"); }),
            "ISA description x.json: key 'depthwise_space.rs_values' is missing");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"]["output_regs"] = {3, 2}; }),
            "ISA description x.json: key 'depthwise_space.output_regs' takes [min, max] with 1 <= min <= max");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"]["rs_values"] = {3, 0}; }),
            "ISA description x.json: key 'depthwise_space.rs_values' takes integers of at least 1");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"]["input_registers"] = 2; }),
            "ISA description x.json: key 'depthwise_space.input_registers' takes 0 or 1");
  EXPECT_EQ(err([](auto& j) { j["depthwise_space"]["reread_weights"] = -1; }),
            "ISA description x.json: key 'depthwise_space.reread_weights' takes an integer of at least 0");
}

}  // namespace
}  // namespace convtune::ukernel_test
