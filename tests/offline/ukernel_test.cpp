// Microkernel names, the offline space, and generated microkernels checked
// numerically against the scalar reference of microkernels/CONTRACT.md.
#include <gtest/gtest.h>

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
#include "convtune/offline/ukernel.h"
#include "convtune/offline/ukernel_codegen.h"
#include "test_util.h"

namespace convtune {
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
  auto all = enumerate_ukernels(isa);
  // 000 §4.1 says 3059; the printed constraints give 2043 (see the issue).
  EXPECT_EQ(all.size(), 2043u);
  std::set<std::pair<int, int>> rs;
  for (const auto& u : all) {
    EXPECT_TRUE(ukernel_admitted(isa, u));
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

}  // namespace
}  // namespace convtune
