// Profile units measured natively through the driver: every microkernel of a
// unit is checked against the contract's reference, and a wrong or crashing
// one is recorded while the rest are still measured.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/execution/runner.h"
#include "convtune/offline/profile.h"
#include "convtune/ukernel/ukernel.h"
#include "convtune/ukernel/codegen.h"
#include "test_util.h"

namespace convtune::profile_test {
namespace {

TEST(ProfileUnit, WrongAndCrashingMicrokernelsAreRecordedAndTheRestMeasured) {
  Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  Runner runner(isa, false, default_cpu(), td.path());
  UkSizes u = test::uk(2, 1, 3, 2, 3, 3);
  UkLayout l = profile_layout(u, isa.lanes, 8);
  std::string src = generated_prelude(isa) + emit_ukernel(isa, u, l, "uk0") +
                    "static void trap(const float *I, long io, const float *W, float *O, long nc, int a)\n"
                    "{ (void)I; (void)io; (void)W; (void)O; (void)nc; (void)a; __builtin_trap(); }\n" +
                    profile_fn_table({"uk0", "uk0", "trap", "uk0"});
  test::write_file(td.file("unit.c"), src);
  auto built = runner.build({{td.file("unit.c"), td.file("unit")}}, 1);
  ASSERT_TRUE(built[0].ok) << built[0].log;
  std::vector<UkCase> cases{{u, l}, {u, l}, {u, l}, {u, l}};
  cases[1].l.out_pix += 1;  // the reference disagrees with what uk0 does
  std::map<size_t, UkMeasured> got;
  runner.measure_unit(td.file("unit"), cases, 0, {0, 1, 2, 3}, 4, 8, TimingProtocol{0.1, 1, 0},
                      [&](size_t i, const UkMeasured& m) { got[i] = m; });
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].status, Status::ok);
  EXPECT_GT(got[0].gflops, 0);
  EXPECT_EQ(got[1].status, Status::wrong_result);
  EXPECT_EQ(got[2].status, Status::crash);
  EXPECT_EQ(got[3].status, Status::ok);
  EXPECT_GT(got[3].gflops, 0);
}

// A taps microkernel's weights fit half of this machine's L2 (profile.h); the
// paper's family keeps 000 §4.1's 512 steps whatever the cache.
TEST(ProfileUnit, ATapsReductionFitsHalfOfL2) {
  Isa avx2 = load_isa("avx2"), avx512 = load_isa("avx512");
  const UkSizes taps = test::uk(3, 2, 2, 2, 3, 3);  // 3*3*2*3 vectors of 8: 1728 B a step
  ASSERT_EQ(ukernel_family(avx2, taps), "taps");
  EXPECT_EQ(profile_nc(avx2, taps, 512 << 10), 128);  // 221 KB <= 256 KiB < 442 KB
  EXPECT_EQ(profile_nc(avx2, taps, 2 << 20), 512);    // 884 KB <= 1 MiB
  EXPECT_EQ(profile_nc(avx2, taps, 0), 512);          // unknown L2: 1 MiB
  const UkSizes paper = test::uk(2, 3, 1, 5, 1, 1);
  ASSERT_EQ(ukernel_family(avx2, paper), "paper");
  EXPECT_EQ(profile_nc(avx2, paper, 512 << 10), 512);
  EXPECT_EQ(profile_nc(avx2, paper, 32 << 10), 512);
  const UkSizes big = test::uk(16, 1, 1, 1, 7, 7);  // 49*16 vectors of 16: 50 KB a step
  ASSERT_EQ(ukernel_family(avx512, big), "taps");
  EXPECT_EQ(profile_nc(avx512, big, 512 << 10), 16);  // never below 16 steps
}

TEST(ProfileUnit, ThePeakLoopRuns) {
  Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  Runner runner(isa, false, default_cpu(), td.path());
  const double peak = runner.peak_gflops();
  EXPECT_TRUE(std::isfinite(peak) && peak > 0) << peak;
}

}  // namespace
}  // namespace convtune::profile_test
