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
#include "test_util.h"

namespace convtune::neon_test {
namespace {

// What stops emulation here ("" when nothing), checked once.
const std::string& missing() {
  static const std::string m = emulation_missing(load_isa("neon"));
  return m;
}

#define SKIP_UNLESS_EMULATION_WORKS()                                                                          \
  if (!missing().empty())                                                                                     \
  GTEST_SKIP() << "cannot emulate NEON: " << missing()                                                        \
               << "; scripts/install-deps.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user"

Runner& runner() {
  static test::TempDir dir;
  static Runner r(load_isa("neon"), true, -1, dir.path());
  return r;
}


// A profile-style unit: the kernels, then ct_profile_fns[] (microkernels/driver.c).
std::string unit_source(const Isa& isa, const std::vector<UkCase>& cases, const std::string& extra = "",
                        const std::vector<std::string>& extra_fns = {}) {
  std::string src = generated_prelude(isa) + extra;
  std::vector<std::string> table;
  for (size_t i = 0; i < cases.size(); ++i) {
    src += emit_ukernel(isa, cases[i].u, cases[i].l, "uk" + std::to_string(i));
    table.push_back("uk" + std::to_string(i));
  }
  for (const auto& f : extra_fns) table.push_back(f);
  return src + profile_fn_table(table);
}

std::map<size_t, std::string> measure_all(const std::string& src, const std::vector<UkCase>& cases) {
  test::TempDir td;
  test::write_file(td.file("unit.c"), src);
  auto built = runner().build({{td.file("unit.c"), td.file("unit")}}, 1);
  EXPECT_TRUE(built[0].ok) << built[0].log;
  std::map<size_t, std::string> status;
  if (!built[0].ok) return status;
  std::vector<size_t> todo;
  for (size_t i = 0; i < cases.size(); ++i) todo.push_back(i);
  runner().measure_unit(td.file("unit"), cases, 0, todo, 3, 3, TimingProtocol{0.01, 1, 0},
                        [&](size_t i, const UkMeasured& m) { status[i] = m.status; });
  return status;
}

// At odd layouts (strides no profile uses), the first and the last microkernel
// of the quick subset for each family and (r, s) pair. The whole quick subset
// runs under qemu at the profile's layouts in NeonCli.EmulatedProfileAndTuneEndToEnd;
// compiling it twice was 20 s of the suite.
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
  auto status = measure_all(unit_source(isa, cases), cases);
  ASSERT_EQ(status.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(status[i], "ok") << sizes_text(cases[i].u);
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
  std::string src = unit_source(isa, cases, trap, {"trap", "uk0"});
  std::vector<UkCase> claimed = cases;
  claimed[1].l.out_pix += 4;  // the driver's reference disagrees with what uk1 does
  claimed.push_back(cases[0]);  // trap
  claimed.push_back(cases[0]);  // uk0 again, after the crash
  auto status = measure_all(src, claimed);
  EXPECT_EQ(status[0], "ok");
  EXPECT_EQ(status[1], "wrong_result");
  EXPECT_EQ(status[2], "crash");
  EXPECT_EQ(status[3], "ok");
}

struct Case {
  const char* shape;
  const char* config;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.shape << " " << c.config; }

class ConvNeon : public ::testing::TestWithParam<Case> {};

TEST_P(ConvNeon, EqualsReferenceEverywhere) {
  Isa isa = load_isa("neon");
  const bool native = cpu_supports(isa);
  if (!native) SKIP_UNLESS_EMULATION_WORKS();
  Shape shape = parse_shape(GetParam().shape);
  GeneratedKernel k = generate_conv(isa, {shape, parse_config(GetParam().config), "ct_conv", "test"});
  test::TempDir td;
  test::write_file(td.file("k.c"), k.c_source);
  ProblemData p = ProblemData::make(shape, 0, 42);  // every output element
  // The same driver either way: natively, or cross-compiled and run under qemu.
  RunResult r = build_and_run_conv(isa, !native, p, td.file("k.c"), "ct_conv", native ? default_cpu() : -1,
                                   TimingProtocol{1, 1, 0}, 120);
  EXPECT_EQ(r.status, "ok") << r.detail << "\n" << k.c_source;
  if (!native) EXPECT_EQ(r.counter_names, "none: emulated under qemu-aarch64 (timings not meaningful)");
}

// 4-lane vectors: K counts 4 channels per V(k).
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvNeon,
    ::testing::Values(
        Case{"K=8,C=8,H=6,R=3", "[T(3,r), T(3,h), T(6,w), T(3,s), T(8,c), U(2,h), U(2,k), V(k)]"},
        Case{"K=8,C=8,H=6,R=3", "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k)]"},
        // Lseq: 17 = 1*8 + 1*9 (000 §3.3), and 34 = 2*(3*3 + 1*8) with an h tile above.
        Case{"K=4,C=4,H=17,R=3", "[T(17,w), Lseq(h,[(1,8),(1,9)]), T(3,r), T(3,s), T(4,c), U(a,h), V(k)]"},
        Case{"K=8,C=4,H=34,R=1", "[T(2,h), T(2,k), Lseq(h,[(3,3),(1,8)]), T(34,w), T(2,c), U(2,c), U(a,h), V(k)]"},
        // Stride 2: a 7x7 kernel with s unrolled, and a 3x3 one.
        Case{"K=4,C=3,H=16,R=7,stride=2,pad=3", "[T(7,r), T(8,h), T(2,w), T(3,c), U(7,s), U(4,w), V(k)]"},
        Case{"K=8,C=6,H=9,R=3,stride=2", "[T(5,h), T(3,r), T(3,s), T(5,w), T(2,c), U(3,c), U(2,k), V(k)]"},
        // K = 6 padded to 8 (000 Fig. 8); R(d) and a batch of 2.
        Case{"K=6,C=5,H=4,R=1", "[T(2,k), T(4,h), T(4,w), T(5,c), V(k)]"},
        Case{"N=2,K=4,C=4,H=6,R=1", "[T(2,n), R(h), T(3,w), T(4,c), U(2,w), V(k)]"},
        // Pf(w): NEON's prefetch template (__builtin_prefetch).
        Case{"K=8,C=8,H=6,R=3", "[T(2,c), T(6,h), T(3,w), T(4,c), U(3,s), U(3,r), U(2,w), U(2,k), V(k), Pf(w)]"},
        // Pf(o): NEON's write prefetch (__builtin_prefetch(p, 1, 3)), with the K tail.
        Case{"K=6,C=5,H=4,R=1", "[T(2,k), T(4,h), T(4,w), T(5,c), V(k), Pf(o)]"},
        // Nt(o): NEON's stream store is the plain store and its fence empty, so the same values.
        Case{"K=6,C=5,H=4,R=3", "[T(2,k), T(3,r), T(4,h), T(4,w), T(3,s), T(5,c), V(k), Nt(o)]"},
        // Wino(2): NEON's winograd.sub, C and K tails of 1 and 2 lanes, 3x3 tiles (half ones at the
        // edges), then 3x4 = 12 tiles without padding as 3*2 + 2*3.
        Case{"K=6,C=5,H=5,R=3,pad=1", "[Wino(2), T(2,k), T(9,h), T(5,c), V(k)]"},
        Case{"K=8,C=4,H=8,W=10,R=3,pad=0", "[Wino(2), T(2,k), Lseq(h,[(3,2),(2,3)]), T(4,c), U(a,h), V(k)]"},
        // Wino(2,b): the fused order, 9 tiles in blocks of 3 (one tile row each).
        Case{"K=6,C=5,H=5,R=3,pad=1", "[Wino(2,3), T(2,k), T(3,h), T(5,c), V(k)]"},
        // Stride 2's polyphase transform: 5x4 outputs, 3x2 tiles in blocks of 3, the last row half.
        Case{"K=6,C=5,H=9,W=7,R=3,stride=2,pad=1", "[Wino(2,3), T(2,k), T(3,h), T(5,c), V(k)]"}));

// Issue 13 on 4 lanes (natively or under qemu): the epilogue's ISA data for
// NEON, with a K tail of 2 lanes read lane by lane (ct_neon_load_n), tap and
// channel loops outside the microkernel and padding.
TEST(ConvNeonEpilogue, EqualsReferenceEverywhere) {
  Isa isa = load_isa("neon");
  const bool native = cpu_supports(isa);
  if (!native) SKIP_UNLESS_EMULATION_WORKS();
  const Shape shape = parse_shape("K=6,C=4,H=5,R=3,pad=1");
  const Config cfg = parse_config("[T(2,c), T(3,r), T(5,h), T(3,s), T(2,c), U(5,w), U(2,k), V(k)]");
  const Epilogue eps[] = {Epilogue::bias_relu6, Epilogue::bias_add};
  test::TempDir td;
  std::vector<CompileJob> jobs;
  std::vector<std::string> srcs;
  for (Epilogue e : eps) {
    GeneratedKernel k = generate_conv(isa, {shape, cfg, "ct_conv", "test", e});
    const std::string base = td.file(to_string(e) == "bias,add" ? "add" : "relu6");
    test::write_file(base + ".c", k.c_source);
    jobs.push_back({base + ".c", base});
    srcs.push_back(k.c_source);
  }
  Runner runner(isa, !native, native ? default_cpu() : -1, td.path());
  const auto built = runner.build(jobs, 1, "ct_conv", {}, Epilogue::bias);  // both have the 5-argument entry
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_TRUE(built[i].ok) << built[i].log;
    runner.set_problem(ProblemData::make(shape, 0, 42, eps[i]));  // every output element
    RunResult r = runner.run_conv(jobs[i].output, TimingProtocol{1, 1, 0}, 120);
    EXPECT_EQ(r.status, "ok") << to_string(eps[i]) << ": " << r.detail << "\n" << srcs[i];
  }
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
