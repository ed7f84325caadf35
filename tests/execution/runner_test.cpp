// The runner's pieces that need no process: the driver's JSON-line protocol
// (one for native and emulated code), and the reference convolution.
#include <gtest/gtest.h>

#include <cmath>

#include "convtune/core/machine.h"
#include "convtune/execution/runner.h"
#include "test_util.h"

namespace convtune::runner_test {
namespace {

ProcResult exited(int code, std::vector<std::string> lines) {
  ProcResult p;
  p.exit_code = code;
  p.lines = std::move(lines);
  return p;
}

TEST(DriverProtocol, OkWithCounters) {
  RunResult r = conv_result(
      exited(0, {R"({"event":"verified"})",
                 R"({"status":"ok","median_s":0.0025,"samples":[0.0024,0.0025,0.0026],"calls_per_sample":4,)"
                 R"("counters":[1000,20],"counter_names":"PAPI_TOT_CYC,PAPI_L1_DCM"})"}),
      10);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_DOUBLE_EQ(r.seconds, 0.0025);
  EXPECT_EQ(r.samples, (std::vector<double>{0.0024, 0.0025, 0.0026}));
  EXPECT_EQ(r.counters, (std::vector<long long>{1000, 20}));
  EXPECT_EQ(r.counter_names, "PAPI_TOT_CYC,PAPI_L1_DCM");
  EXPECT_EQ(r.detail, "");
}

TEST(DriverProtocol, ProbeTimesComeOnePerSample) {
  RunResult r = conv_result(exited(0, {R"({"status":"ok","median_s":0.002,"samples":[0.002,0.003],)"
                                       R"("probe_s":[0.0005,0.0006],"calls_per_sample":4,"counters":[],)"
                                       R"("counter_names":"none"})"}),
                            10);
  EXPECT_EQ(r.status, Status::ok) << r.detail;
  EXPECT_EQ(r.probe_s, (std::vector<double>{0.0005, 0.0006}));
  EXPECT_DOUBLE_EQ(r.wall_seconds, 0.002);
  const std::string torn = R"({"status":"ok","median_s":0.002,"samples":[0.002,0.003],"probe_s":[0.0005],)"
                           R"("calls_per_sample":4,"counters":[],"counter_names":"none"})";
  r = conv_result(exited(0, {torn}), 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, "the driver reported an unreadable result: " + torn);
}

TEST(DriverProtocol, FailuresCarryTheirReason) {
  RunResult r = conv_result(
      exited(0, {R"x({"status":"wrong_result","detail":"output element 7 differs from the reference by 1 (tolerance 0.01)"})x"}),
      10);
  EXPECT_EQ(r.status, Status::wrong_result);
  EXPECT_EQ(r.detail, "output element 7 differs from the reference by 1 (tolerance 0.01)");
  // The driver could not start its work: the code was not loaded.
  RunResult l = conv_result(exited(2, {R"({"status":"error","detail":"cannot read problem.bin"})"}), 10);
  EXPECT_EQ(l.status, Status::load_error);
  EXPECT_EQ(l.detail, "cannot read problem.bin");
  // The executable could not be started at all.
  RunResult x = conv_result(exited(127, {"cannot run 'cand00001': No such file or directory"}), 10);
  EXPECT_EQ(x.status, Status::load_error);
  EXPECT_EQ(x.detail, "cannot run 'cand00001': No such file or directory");
}

TEST(DriverProtocol, MalformedLinesAreACrashWithTheRawText) {
  // A torn line, then nothing: the process said something that is not a result.
  RunResult r = conv_result(exited(0, {R"({"event":"verified"})", R"({"status":"ok","median_s":0.00)"}), 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, R"(exited with code 0 before reporting: {"status":"ok","median_s":0.00)");
  // Valid JSON, but not what the protocol says.
  r = conv_result(exited(0, {R"({"status":"ok","median_s":"fast"})"}), 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, R"(the driver reported an unreadable result: {"status":"ok","median_s":"fast"})");
  r = conv_result(exited(0, {R"({"status":"great"})"}), 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, R"(the driver reported an unreadable result: {"status":"great"})");
}

TEST(DriverProtocol, DeathAndSilenceSayHowTheyEnded) {
  ProcResult p = exited(-1, {R"({"event":"verified"})", "qemu: uncaught target signal 5 (Trace/breakpoint trap)"});
  p.signal = 5;
  RunResult r = conv_result(p, 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, "killed by signal 5 (Trace/breakpoint trap) before reporting: qemu: uncaught target signal 5 "
                      "(Trace/breakpoint trap)");
  ProcResult t = exited(-1, {});
  t.timed_out = true;
  r = conv_result(t, 3);
  EXPECT_EQ(r.status, Status::timeout);
  EXPECT_EQ(r.detail, "no result within 3 s (--timeout)");
}

// The protocol through real driver executables: a result per JSON line, and
// anything else (a start failure, a torn or foreign line) a status with the why.
TEST(DriverProtocol, RealExecutables) {
  Isa isa = load_isa("avx2");
  if (!cpu_supports(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  test::TempDir td;
  Runner runner(isa, false, default_cpu(), td.path());
  const Shape s = parse_shape("K=8,C=1,H=1,R=1");  // one pixel, eight outputs
  runner.set_problem(ProblemData::make(s, 0, 1));
  auto build = [&](const std::string& name, const std::string& body) {
    // KCRS weights of a 1x1 convolution with C=1 are already in k order.
    test::write_file(td.file(name + ".c"), "#include <stdio.h>\n#include <unistd.h>\n"
                                           "const unsigned long conv_packed_floats = 8;\n"
                                           "void conv_pack(const float *kcrs, float *p) {\n"
                                           "  for (int k = 0; k < 8; ++k) p[k] = kcrs[k];\n}\n"
                                           "void conv(const float *in, const float *w, float *out) {\n" +
                                               body + "\n}\n");
    CompileResult r = runner.build({{td.file(name + ".c"), td.file(name)}}, 1, "conv")[0];
    EXPECT_TRUE(r.ok) << r.log;
    return td.file(name);
  };
  const TimingProtocol quick{0.1, 1, 0};
  const std::string right = build("right", "for (int k = 0; k < 8; ++k) out[k] = in[0] * w[k];");
  RunResult r = runner.run_conv(right, quick, 10);
  EXPECT_EQ(r.status, Status::ok) << r.detail;
  EXPECT_GT(r.seconds, 0);
  EXPECT_EQ(r.samples.size(), 1u);
  EXPECT_TRUE(r.probe_gflops.empty());  // no reference speed yet: no clock probe
  EXPECT_EQ(r.seconds, r.wall_seconds);
  // Once the peak is measured, each sample carries the probe's speed and is
  // brought to the reference speed: wall time x probe speed / reference.
  const double ref = runner.peak_gflops();
  ASSERT_GT(ref, 0);
  EXPECT_EQ(runner.reference_gflops(), ref);
  r = runner.run_conv(right, TimingProtocol{5, 3, 0}, 10);
  EXPECT_EQ(r.status, Status::ok) << r.detail;
  ASSERT_EQ(r.probe_gflops.size(), 3u);
  ASSERT_EQ(r.probe_s.size(), 3u);
  std::vector<double> wall;
  for (size_t i = 0; i < 3; ++i) {
    // The probe ran beside each sample: a speed, finite and positive (how
    // near the peak depends on the machine's load, not on this code).
    EXPECT_TRUE(std::isfinite(r.probe_gflops[i]) && r.probe_gflops[i] > 0) << r.probe_gflops[i];
    EXPECT_GT(r.probe_s[i], 0);
    wall.push_back(r.samples[i] * ref / r.probe_gflops[i]);
  }
  EXPECT_DOUBLE_EQ(r.seconds, median(r.samples));
  EXPECT_DOUBLE_EQ(r.wall_seconds, median(wall));
  // A second peak, as short as a quick tune's (--min-repeat-ms 5): it runs,
  // and it does not move the reference.
  const double quick_peak = runner.peak_gflops(peak_min_ms(5));
  EXPECT_TRUE(std::isfinite(quick_peak) && quick_peak > 0) << quick_peak;
  EXPECT_EQ(runner.reference_gflops(), ref);
  r = runner.run_conv(build("wrong", "for (int k = 0; k < 8; ++k) out[k] = in[0] * w[k] + (k == 5);"), quick, 10);
  EXPECT_EQ(r.status, Status::wrong_result);
  EXPECT_EQ(r.detail.rfind("output element 5 differs from the reference by 1 (tolerance ", 0), 0u) << r.detail;
  // Guard zones: a write one float past the output, a read one float past the input.
  r = runner.run_conv(build("spill", "for (int k = 0; k < 9; ++k) out[k] = in[0] * w[k % 8];"), quick, 10);
  EXPECT_EQ(r.status, Status::wrong_result);
  EXPECT_EQ(r.detail, "wrote 1 float(s) past its end of the output (8 floats)");
  r = runner.run_conv(build("spill_before", "for (int k = -2; k < 8; ++k) out[k] = in[0] * w[k < 0 ? 0 : k];"),
                      quick, 10);
  EXPECT_EQ(r.detail, "wrote 2 float(s) before its start of the output (8 floats)");
  // The output and the packed weights start on a 64-byte line, as the
  // bench's (core/aligned.h): a kernel that computes only there passes.
  r = runner.run_conv(build("aligned", "const int a = ((unsigned long)out | (unsigned long)w) % 64 == 0; "
                                       "for (int k = 0; k < 8; ++k) out[k] = a ? in[0] * w[k] : 0;"),
                      quick, 10);
  EXPECT_EQ(r.status, Status::ok) << r.detail;
  r = runner.run_conv(build("overread", "volatile float x = in[1024]; (void)x; "
                                        "for (int k = 0; k < 8; ++k) out[k] = in[0] * w[k];"),
                      quick, 10);
  EXPECT_EQ(r.status, Status::crash) << r.detail;
  r = runner.run_conv(build("underread", "volatile float x = in[-1]; (void)x; "
                                         "for (int k = 0; k < 8; ++k) out[k] = in[0] * w[k];"),
                      quick, 10);
  EXPECT_EQ(r.status, Status::crash) << r.detail;
  r = runner.run_conv(build("torn", "(void)in; (void)w; (void)out; printf(\"{\\\"status\\\":\\\"ok\"); "
                                    "fflush(stdout); _exit(0);"),
                      quick, 10);
  EXPECT_EQ(r.status, Status::crash);
  EXPECT_EQ(r.detail, R"(exited with code 0 before reporting: {"status":"ok)");
  r = runner.run_conv(td.file("missing"), quick, 10);
  EXPECT_EQ(r.status, Status::load_error);
  EXPECT_EQ(r.detail, "cannot run '" + td.file("missing") + "': No such file or directory");
}

// A 1-channel 3x3 convolution with pad 1, computed by hand at two points.
TEST(PeakLength, TwiceTheCandidatesMeasurementAtMostTheDefault) {
  EXPECT_EQ(peak_min_ms(100), kPeakMinMs);  // tune's and bench's defaults: 200 ms, as before
  EXPECT_EQ(kPeakMinMs, 200);
  EXPECT_EQ(peak_min_ms(1), 2);
  EXPECT_EQ(peak_min_ms(60000), kPeakMinMs);
}

// The operands every implementation reads in bench start on a cache line, as
// the tuner's driver gives them and as frameworks allocate tensors: a
// kernel reading from a 16-byte malloc address loses about a point of peak
// against an aligned one, which oneDNN does not (core/aligned.h).
TEST(ProblemData, OperandsStartOnACacheLine) {
  for (size_t points : {size_t(0), size_t(5)}) {
    const ProblemData p = ProblemData::make(parse_shape("K=20,C=3,H=33,W=35,R=3,pad=1"), points, 7, Epilogue::bias_add);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.input.data()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.residual.data()) % 64, 0u);
    EXPECT_EQ(p.residual.size(), p.output_size());
  }
}

TEST(Reference, PointsMatchAHandComputation) {
  Shape s = parse_shape("K=1,C=1,H=3,R=3");
  ProblemData p = ProblemData::make(s, 0, 3);
  ASSERT_EQ(p.input.size(), 9u);    // 3x3, not padded
  ASSERT_EQ(p.weights.size(), 9u);  // KCRS
  ASSERT_EQ(p.output_size(), 9u);   // exactly K = 1 wide
  auto in = [&](int y, int x) { return double(p.input[size_t(y * 3 + x)]); };
  auto w = [&](int r, int q) { return double(p.weights[size_t(r * 3 + q)]); };
  double centre = 0, corner = 0;
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q) {
      centre += in(r, q) * w(r, q);
      if (r > 0 && q > 0) corner += in(r - 1, q - 1) * w(r, q);  // output (0,0): the other taps are padding
    }
  EXPECT_DOUBLE_EQ(reference_point(p, 1 * 3 + 1), centre);
  EXPECT_DOUBLE_EQ(reference_point(p, 0), corner);
  EXPECT_EQ(p.check_index.size(), p.output_size());  // points = 0: every element
}

}  // namespace
}  // namespace convtune::runner_test
