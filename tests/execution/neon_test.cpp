// NEON from the same generator (issue 6), checked against the reference under
// qemu-aarch64 when this CPU is not AArch64: microkernels over the size range,
// whole convolutions (Lseq, stride 2, padded K), and the CLI's --emulate.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "convtune/codegen/conv.h"
#include "convtune/execution/compiler.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/offline/profile.h"
#include "convtune/execution/runner.h"
#include "convtune/ukernel/codegen.h"
#include "kernel_harness.h"
#include "test_util.h"

namespace convtune::neon_test {
namespace {

#define SKIP_UNLESS_EMULATION_WORKS()                                            \
  if (const std::string why = test::cannot_run(load_isa("neon")); !why.empty()) \
  GTEST_SKIP() << why

// At odd layouts (strides no profile uses), the first and the last microkernel
// of the quick subset for each family and (r, s) pair. The whole quick subset
// runs under qemu at the profile's layouts in NeonCli.EmulatedProfileAndTuneEndToEnd;
// compiling it twice would double that cost in the suite.
TEST(NeonUkernels, EachFamilyAndTapShapeMatchesReferenceUnderQemu) {
  Isa isa = load_isa("neon");
  if (cpu_supports(isa)) GTEST_SKIP() << "this CPU runs NEON natively: UkernelCodegen/neon checks these";
  SKIP_UNLESS_EMULATION_WORKS();
  std::map<std::tuple<std::string, int, int>, std::vector<UkSizes>> by_shape;
  for (const UkSizes& u : quick_subset(isa)) by_shape[{ukernel_family(isa, u), u.r, u.s}].push_back(u);
  std::vector<UkSizes> sample;
  for (const auto& [key, v] : by_shape) {
    sample.push_back(v.front());
    if (v.size() > 1) sample.push_back(v.back());
  }
  ASSERT_GE(by_shape.size(), 8u);  // both families, (r, s) in 1, 3, 5, 7
  std::vector<UkCase> cases;
  for (size_t i = 0; i < sample.size(); ++i) cases.push_back({sample[i], test::odd_layout(sample[i], isa.lanes, i, 8)});
  const auto status = test::check_ukernels(isa, cases);  // under qemu: the driver's profile unit
  ASSERT_EQ(status.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(status[i].status, Status::ok) << sizes_text(cases[i].u);
}

// The check is not vacuous: a layout mismatch is a wrong result, a trap is a
// crash, and the kernels after them are still measured.
TEST(NeonUkernels, WrongAndCrashingKernelsAreCaught) {
  Isa isa = load_isa("neon");
  if (cpu_supports(isa)) GTEST_SKIP() << "this CPU runs NEON natively";
  SKIP_UNLESS_EMULATION_WORKS();
  UkSizes u{2, 1, 7, 1, 1, 1};
  std::vector<UkCase> cases{{u, test::odd_layout(u, isa.lanes, 0, 8)}, {u, test::odd_layout(u, isa.lanes, 1, 8)}};
  std::string trap = "static void trap(const float *I, long io, const float *W, float *O, long nc, int a)\n"
                     "{ (void)I; (void)io; (void)W; (void)O; (void)nc; (void)a; __builtin_trap(); }\n";
  std::string src = test::ukernel_unit(isa, cases, trap, {"trap", "uk0"});
  std::vector<UkCase> claimed = cases;
  claimed[1].l.out_pix += 4;  // the driver's reference disagrees with what uk1 does
  claimed.push_back(cases[0]);  // trap
  claimed.push_back(cases[0]);  // uk0 again, after the crash
  const auto status = test::run_ukernel_unit(isa, src, claimed);
  ASSERT_EQ(status.size(), claimed.size());
  EXPECT_EQ(status[0].status, Status::ok) << status[0].detail;
  EXPECT_EQ(status[1].status, Status::wrong_result);
  EXPECT_EQ(status[2].status, Status::crash);
  EXPECT_EQ(status[3].status, Status::ok);
}

// The one list's NEON cases (tests/kernel_harness.cpp; 4-lane vectors: K
// counts 4 channels per V(k)), natively or cross-compiled and run under qemu
// with the same driver.
class ConvNeon : public ::testing::TestWithParam<test::ConvCase> {};

TEST_P(ConvNeon, EqualsReferenceEverywhere) {
  Isa isa = load_isa("neon");
  SKIP_UNLESS_EMULATION_WORKS();
  const auto r = test::check_conv(isa, parse_shape(GetParam().shape), parse_config(GetParam().config));
  EXPECT_EQ(r.status, Status::ok) << r.detail << "\n" << r.source;
  if (test::emulated_here(isa)) EXPECT_EQ(r.counter_names, "none: emulated under qemu-aarch64 (timings not meaningful)");
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvNeon, ::testing::ValuesIn(test::conv_cases("neon")));

// Issue 13 on 4 lanes (natively or under qemu): the epilogue's ISA data for
// NEON, with a K tail of 2 lanes read lane by lane (ct_neon_load_n), tap and
// channel loops outside the microkernel and padding.
TEST(ConvNeonEpilogue, EqualsReferenceEverywhere) {
  Isa isa = load_isa("neon");
  SKIP_UNLESS_EMULATION_WORKS();
  const Shape shape = parse_shape("K=6,C=4,H=5,R=3,pad=1");
  const Config cfg = parse_config("[T(2,c), T(3,r), T(5,h), T(3,s), T(2,c), U(5,w), U(2,k), V(k)]");
  const auto r = test::check_convs(isa, {{shape, cfg, Epilogue::bias_relu6}, {shape, cfg, Epilogue::bias_add}});
  for (const auto& k : r) EXPECT_EQ(k.status, Status::ok) << k.detail << "\n" << k.source;
  const std::vector<std::string> srcs{r[0].source, r[1].source};
  EXPECT_NE(srcs[1].find("vaddq_f32(acc_h0_w0_k1, ct_neon_load_n(Q + 4, 2))"), std::string::npos) << srcs[1];
}

TEST(NeonCli, RefusesWithoutEmulate) {
  if (cpu_supports(load_isa("neon"))) GTEST_SKIP() << "this CPU runs NEON natively";
  const std::string err = "convtune: error: this CPU cannot run neon code; pass --emulate to run it under "
                          "qemu-aarch64 (timings are not meaningful)\n";
  auto r = test::run_cli("tune --arch neon --shape K=16,C=8,H=8,R=3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, err);
  test::TempDir td;
  r = test::run_cli("profile --arch neon --quick --out " + td.file("t.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, err);
}

std::vector<nlohmann::json> read_log(const std::string& path) {
  std::vector<nlohmann::json> v;
  std::istringstream ss(test::read_file(path));
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

// profile --quick then tune under qemu, with a wrong and a crashing candidate.
TEST(NeonCli, EmulatedProfileAndTuneEndToEnd) {
  if (cpu_supports(load_isa("neon"))) GTEST_SKIP() << "this CPU runs NEON natively";
  SKIP_UNLESS_EMULATION_WORKS();
  test::TempDir td;
  const std::string fast = " --min-repeat-ms 1 --repeat 1 -q";
  auto r = test::run_cli("profile --arch neon --emulate --quick --threshold 0.05" + fast + " --out " +
                         td.file("neon.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(emulated: timings not meaningful)"), std::string::npos) << r.out;
  auto t = nlohmann::json::parse(test::read_file(td.file("neon.json")));
  EXPECT_EQ(t["isa"], "neon");
  EXPECT_EQ(t["emulated"], true);
  ASSERT_GE(t["microkernels"].size(), 20u);
  for (const auto& m : t["microkernels"]) EXPECT_EQ(m["status"], "ok") << m["name"];

  // tests/execution/fault_cc.sh wraps the cross compiler and breaks two candidates.
  std::string cmd = "env CROSS_CC=" + std::string(CONVTUNE_SOURCE_DIR) +
                    "/tests/execution/fault_cc.sh FAULT_CC_REAL=" + load_isa("neon").emulation.cross_cc +
                    " FAULT_CC_FAULTS=cand00000:wrong,cand00001:crash " + std::string(CONVTUNE_BIN) +
                    " tune --arch neon --emulate --shape K=16,C=8,H=8,R=3 --trials 3 --check-points 0" + fast +
                    " --table " + td.file("neon.json") + " --out " + td.file("tune") + " >" + td.file("out") +
                    " 2>" + td.file("err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << test::read_file(td.file("err"));
  EXPECT_NE(test::read_file(td.file("out")).find("(emulated: timings not meaningful)"), std::string::npos);
  auto log = read_log(td.file("tune/log.jsonl"));
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0]["status"], "wrong_result");
  EXPECT_EQ(log[1]["status"], "crash");
  EXPECT_EQ(log[2]["status"], "ok") << log[2].dump();
  for (const auto& rec : log) {
    EXPECT_EQ(rec["emulated"], true);
    EXPECT_EQ(rec["isa"], "neon");
  }
  std::string kernel = test::read_file(td.file("tune/") + log[2]["layer"].get<std::string>() + ".c");
  EXPECT_NE(kernel.find("#include <arm_neon.h>"), std::string::npos);
  EXPECT_NE(kernel.find("vfmaq_f32("), std::string::npos);
}

}  // namespace
}  // namespace convtune::neon_test
