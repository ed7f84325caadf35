// Microkernel names, the offline space, and generated microkernels checked
// numerically against the scalar reference of microkernels/CONTRACT.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "convtune/execution/compiler.h"
#include "convtune/execution/dynlib.h"
#include "convtune/core/error.h"
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

// Every (r, s) pair and the edge sizes: the quick subset is exactly that.
// Each ISA this CPU runs (NEON on x86 runs under qemu in neon_test.cpp).
class UkernelCodegen : public ::testing::TestWithParam<const char*> {};

TEST_P(UkernelCodegen, SampleMatchesScalarReference) {
  Isa isa = load_isa(GetParam());
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU cannot run " << isa.name << " natively";
  std::vector<UkSizes> sample = quick_subset(isa);
  ASSERT_GE(sample.size(), 40u);
  // And blocks that re-read weight vectors (w*h*k + k + 1 > registers): the
  // first and last four of the space.
  std::vector<UkSizes> reread;
  for (const UkSizes& u : enumerate_ukernels(isa))
    if (u.out_regs() + u.k + 1 > isa.vector_registers) reread.push_back(u);
  ASSERT_GE(reread.size(), 8u);
  sample.insert(sample.end(), reread.begin(), reread.begin() + 4);
  sample.insert(sample.end(), reread.end() - 4, reread.end());
  test::TempDir td;
  // Odd strides and a conv stride of 2 so that no index can be silently wrong.
  std::vector<UkLayout> layouts;
  std::string src = generated_prelude(isa);
  for (size_t i = 0; i < sample.size(); ++i) {
    const UkSizes& u = sample[i];
    UkLayout l = test::odd_layout(u, isa.lanes, i, 16);
    layouts.push_back(l);
    src += emit_ukernel(isa, u, l, "uk" + std::to_string(i));
    src += "void call" + std::to_string(i) +
           "(const float *I, const float *W, float *O, long nc, int acc) { uk" + std::to_string(i) +
           "(I, 0, W, O, nc, acc); }\n";
  }
  test::write_file(td.file("uk.c"), src);
  Compiler cc = Compiler::from_env(isa.cflags);
  CompileResult cr = compile_one(cc, {td.file("uk.c"), td.file("uk.so")});
  ASSERT_TRUE(cr.ok) << cr.log;
  DynLib lib(td.file("uk.so"));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (size_t i = 0; i < sample.size(); ++i) {
    const UkSizes& u = sample[i];
    const UkLayout& l = layouts[i];
    using Fn = void (*)(const float*, const float*, float*, long, int);
    auto fn = reinterpret_cast<Fn>(lib.symbol("call" + std::to_string(i)));
    const int64_t nc = 3;
    std::vector<float> in((u.h - 1) * l.stride * l.in_row + u.r * l.in_row + 64),
        w(u.r * l.w_r + 64), out(u.h * l.out_row + 64), ref;
    for (auto& x : in) x = dist(rng);
    for (auto& x : w) x = dist(rng);
    for (auto& x : out) x = dist(rng);
    ref = out;
    // accumulate=1 adds to what is there; then accumulate=0 must ignore NaN garbage.
    fn(in.data(), w.data(), out.data(), nc, 1);
    reference_ukernel(u, l, isa.lanes, in.data(), w.data(), ref.data(), nc, true);
    const double tol = 1e-5 * double(nc * u.c * u.r * u.s + 1);
    for (size_t j = 0; j < out.size(); ++j)
      ASSERT_NEAR(out[j], ref[j], tol) << sizes_text(u) << " accumulate, element " << j;
    std::vector<float> before = out;
    for (int h = 0; h < u.h; ++h)
      for (int x = 0; x < u.w; ++x)
        for (int k = 0; k < u.k * isa.lanes; ++k) out[h * l.out_row + x * l.out_pix + k] = std::nanf("");
    fn(in.data(), w.data(), out.data(), nc, 0);
    reference_ukernel(u, l, isa.lanes, in.data(), w.data(), before.data(), nc, false);
    for (size_t j = 0; j < out.size(); ++j)
      ASSERT_NEAR(out[j], before[j], tol) << sizes_text(u) << " overwrite, element " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, UkernelCodegen, ::testing::Values("avx512", "avx2", "neon"));

// CONTRACT.md "How it is built": a microkernel loads each weight vector once
// per c step and keeps it in a register. GCC 12's znver2/znver3 cost model
// (what -mtune=native picks on Zen 2/3) instead folds the load into every FMA
// that uses it: k3c1w4h1 then issues 12 full-width loads and 4 broadcasts per
// 12 FMAs, more than two load ports carry; the profile measured it at 49.7 %
// of peak on a Zen 3 against 98.7 % in registers. The ISAs' flags must not
// let the compiler fold.
// Compiled to assembly only, so every x86 ISA is checked on any x86 CPU.
struct AsmCounts {
  int folded = 0;  // FMAs reading a weight from memory
  int stack = 0;   // vector moves to or from the stack: spills
};
AsmCounts count_asm(const Isa& isa, const UkSizes& u, const std::vector<std::string>& extra, const test::TempDir& td) {
  std::string src = generated_prelude(isa) + emit_ukernel(isa, u, profile_layout(u, isa.lanes, 512), "uk") +
                    "void call(const float *I, const float *W, float *O, long nc) { uk(I, 0, W, O, nc, 0); }\n";
  test::write_file(td.file("fold.c"), src);
  std::vector<std::string> flags = isa.cflags;
  flags.insert(flags.end(), extra.begin(), extra.end());
  Compiler cc = Compiler::from_env(flags);
  cc.output_flags = {"-S"};
  CompileResult cr = compile_one(cc, {td.file("fold.c"), td.file("fold.s")});
  EXPECT_TRUE(cr.ok) << cr.log;
  // An FMA whose first (AT&T: source) operand is memory, not an AVX-512
  // embedded broadcast of the input ({1toN}): a folded weight load.
  std::ifstream in(td.file("fold.s"));
  AsmCounts n;
  auto has = [](const std::string& line, const char* what) { return line.find(what) != std::string::npos; };
  for (std::string line; std::getline(in, line);) {
    if (has(line, "vfmadd") && has(line, "(%") && !has(line, "{1to")) ++n.folded;
    if (has(line, "vmov") && (has(line, "(%rsp)") || has(line, "(%rbp)"))) ++n.stack;
  }
  return n;
}
int folded_fmas(const Isa& isa, const std::vector<std::string>& extra, const test::TempDir& td) {
  return count_asm(isa, UkSizes{3, 1, 4, 1, 1, 1}, extra, td).folded;
}

class UkernelFlags : public ::testing::TestWithParam<const char*> {};

TEST_P(UkernelFlags, WeightVectorsStayInRegisters) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 flags need an x86 compiler; this host is not x86-64";
#endif
  Isa isa = load_isa(GetParam());
  test::TempDir td;
  EXPECT_EQ(folded_fmas(isa, {}, td), 0) << "the " << isa.name << " flags let the compiler fold weight loads into FMAs";
  // The check itself: with the tuning that folds, it must see the folds.
  const int control = folded_fmas(isa, {"-mtune=znver3"}, td);
  if (control == 0) GTEST_SKIP() << "this compiler does not fold under -mtune=znver3 (GCC 12 does): the control is void";
  EXPECT_GE(control, 12);
}

// A block whose accumulators leave too few registers for its k weight
// vectors (w*h*k + k + 1 > registers) re-reads the last ones from memory at
// each use (ukernel/codegen.cpp, kLaunder) instead of keeping them live: one
// folded FMA per output pixel and re-read vector, and nothing on the stack.
// Before, GCC kept both of k2c1w7h1's weight vectors and spilled an
// accumulator: 48.7 % of peak on a Zen 3, 89 % re-reading one.
TEST_P(UkernelFlags, AFullRegisterFileRereadsWeightsInsteadOfSpilling) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86 flags need an x86 compiler; this host is not x86-64";
#endif
  Isa isa = load_isa(GetParam());
  test::TempDir td;
  // 14 + 2 + 1 = 17 of 16 registers; 28 + 4 + 1 = 33 of 32: one vector re-read.
  const UkSizes full = isa.vector_registers == 16 ? UkSizes{2, 1, 7, 1, 1, 1} : UkSizes{4, 1, 7, 1, 1, 1};
  const AsmCounts n = count_asm(isa, full, {}, td);
  EXPECT_EQ(n.stack, 0) << sizes_text(full) << " spills";
  EXPECT_EQ(n.folded, 7) << sizes_text(full) << ": one re-read weight vector per output pixel";
  // A block that fits keeps every weight vector in registers.
  EXPECT_EQ(count_asm(isa, UkSizes{3, 1, 4, 1, 1, 1}, {}, td).folded, 0);
}

INSTANTIATE_TEST_SUITE_P(X86, UkernelFlags, ::testing::Values("avx512", "avx2"));

}  // namespace
}  // namespace convtune::ukernel_test
