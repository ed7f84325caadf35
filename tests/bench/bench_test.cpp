// convtune bench: the agreement check catches a wrong kernel with one exact
// error line, the baselines compute the reference convolution, and the CLI
// reports what it timed.
#include <algorithm>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/baselines/baseline.h"
#include "convtune/bench/bench.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/core/shape.h"
#include "test_util.h"

namespace convtune::bench_test {
namespace {

using test::run_cli;

const std::string kTable = test::host_table();  // this host's ISA, AVX-512 or not
const std::string kShape = "K=32,C=16,H=8,R=3";
const std::string kFast = " --min-repeat-ms 1 --repeat 1 -q";

// The reference output at every element (check_points 0 checks them all).
std::vector<float> reference_output(const ProblemData& p) {
  std::vector<float> out(p.output_size());
  for (size_t i = 0; i < p.check_index.size(); ++i) out[size_t(p.check_index[i])] = float(p.check_value[i]);
  return out;
}

TEST(Bench, AgreementCheckNamesTheWrongElement) {
  ProblemData p = ProblemData::make(parse_shape("K=20,C=8,H=6,R=3"), 0, 3);
  std::vector<float> out = reference_output(p);
  double err = -1;
  EXPECT_EQ(check_output(p, out, "convtune's kernel", "fix it", &err), "");
  EXPECT_LT(err, p.tolerance);
  // Spoil (n=0, h=1, w=2, k=3): index ((h * Wo) + w) * K + k, exactly K = 20 wide.
  const size_t at = size_t((1 * 6 + 2) * 20 + 3);
  const double want = double(out[at]);
  out[at] += 0.5f;
  EXPECT_EQ(check_output(p, out, "convtune's kernel", "fix it"),
            fmt::format("convtune's kernel disagrees with the reference at output (n=0,h=1,w=2,k=3): {:.6g} "
                        "instead of {:.6g} (tolerance {:.3g}); fix it",
                        double(out[at]), p.check_value[at], p.tolerance));
  EXPECT_NEAR(p.check_value[at], want, 1e-5);
  // A skipped element (NaN) is caught too.
  out[at] = std::nanf("");
  EXPECT_NE(check_output(p, out, "x", "y").find("(n=0,h=1,w=2,k=3): nan instead of"), std::string::npos);
}

// Padding, stride 2, the 1x1 path that skips im2col, and K not a multiple of the vector length.
TEST(Bench, BaselinesComputeTheReference) {
  for (const char* shape : {"K=20,C=8,H=9,R=3", "K=32,C=3,H=15,R=7,stride=2,pad=3", "K=16,C=24,H=5,R=1",
                            "K=48,C=16,H=10,R=1,stride=2", "N=2,K=16,C=4,H=6,W=7,R=3,S=1"}) {
    ProblemData p = ProblemData::make(parse_shape(shape), 0, 7);
    std::string missing_dnn, missing_blas;
    std::string missing_xnn;
    auto dnn = make_onednn(p, &missing_dnn);
    auto blas = make_im2col_blas(p, &missing_blas);
    auto xnn = make_xnnpack(p, &missing_xnn, 2);  // a pool of 2 threads: the same output
    for (Baseline* b : {dnn.get(), blas.get(), xnn.get()}) {
      if (!b) continue;
      b->run();
      EXPECT_EQ(check_output(p, b->output(), b->impl(), "-"), "") << shape;
      EXPECT_FALSE(b->impl().empty());
    }
    if (!xnn) {
      EXPECT_NE(missing_xnn.find("apt-get install libxnnpack-dev"), std::string::npos);
    }
    if (!dnn) {
      EXPECT_NE(missing_dnn.find("apt-get install libdnnl-dev"), std::string::npos);
    }
    if (!blas) {
      EXPECT_NE(missing_blas.find("apt-get install libopenblas-dev"), std::string::npos);
    }
  }
}

const std::string kNoLibxsmm =
    "LIBXSMM is not in this build; install it (sudo apt-get install libxsmm-dev) and rebuild convtune";

// LIBXSMM on the shapes above plus C=3 with pad 1 and stride 2, on 1 and 2
// OpenMP threads (each thread id computes its share); every call pads the
// input anew, so the second call must agree as well.
TEST(Bench, LibxsmmComputesTheReference) {
  std::string missing;
  const bool had_bind = std::getenv("OMP_PROC_BIND") != nullptr;
  if (!make_libxsmm(ProblemData::make(parse_shape("K=16,C=16,H=4,R=1"), 0, 7), &missing)) GTEST_SKIP() << missing;
  // LIBXSMM's init sets OMP_PROC_BIND=TRUE; left in, the processes bench starts later would pin their threads.
  EXPECT_EQ(std::getenv("OMP_PROC_BIND") != nullptr, had_bind);
  for (const char* shape : {"K=20,C=8,H=9,R=3", "K=32,C=3,H=15,R=7,stride=2,pad=3", "K=16,C=24,H=5,R=1",
                            "K=48,C=16,H=10,R=1,stride=2", "N=2,K=16,C=4,H=6,W=7,R=3,S=1",
                            "K=10,C=3,H=11,R=3,stride=2,pad=1"}) {
    ProblemData p = ProblemData::make(parse_shape(shape), 0, 7);
    for (int threads : {1, 2}) {
      auto lx = make_libxsmm(p, &missing, threads);
      ASSERT_TRUE(lx) << missing;
      for (int call = 0; call < 2; ++call) {
        lx->run();
        EXPECT_EQ(check_output(p, lx->output(), lx->impl(), "-"), "") << shape << " threads " << threads;
      }
      EXPECT_EQ(lx->impl().rfind("LIBXSMM 1.", 0), 0u) << lx->impl();
      EXPECT_NE(lx->impl().find(fmt::format("({} thread", threads)), std::string::npos) << lx->impl();
    }
  }
}

// Issue 13: the baselines apply the same epilogue (oneDNN post-ops, a loop
// after the GEMM) and agree with the reference, which the epilogue changes.
TEST(Bench, BaselinesApplyTheEpilogue) {
  for (const char* shape : {"K=20,C=8,H=9,R=3", "K=16,C=24,H=5,R=1"}) {
    for (Epilogue e : {Epilogue::bias, Epilogue::bias_relu, Epilogue::bias_relu6, Epilogue::bias_add}) {
      ProblemData p = ProblemData::make(parse_shape(shape), 0, 7, e);
      ProblemData plain = ProblemData::make(parse_shape(shape), 0, 7);
      EXPECT_NE(check_output(p, reference_output(plain), "plain", "-"), "") << shape << " " << to_string(e);
      std::string missing_dnn, missing_blas;
      std::string missing_xnn;
      auto dnn = make_onednn(p, &missing_dnn);
      auto blas = make_im2col_blas(p, &missing_blas);
      auto xnn = make_xnnpack(p, &missing_xnn);
      for (Baseline* b : {dnn.get(), blas.get(), xnn.get()}) {
        if (!b) continue;
        b->run();
        EXPECT_EQ(check_output(p, b->output(), b->impl(), "-"), "") << shape << " " << to_string(e);
      }
      if (e == Epilogue::bias_add) {  // XNNPACK cannot fuse a residual: left out, with the reason
        EXPECT_FALSE(xnn);
        EXPECT_EQ(missing_xnn, "XNNPACK's convolution has no residual add; it is left out for --epilogue bias,add");
      }
      std::string missing_lx;  // LIBXSMM fuses no epilogue at all: left out, with the reason
      EXPECT_FALSE(make_libxsmm(p, &missing_lx));
#ifdef CONVTUNE_HAVE_LIBXSMM
      EXPECT_EQ(missing_lx, "LIBXSMM 1.17's convolution fuses no bias or activation; it is left out for --epilogue " +
                                to_string(e));
#else
      EXPECT_EQ(missing_lx, kNoLibxsmm);
#endif
    }
  }
}

// Issue 13 end to end, in the default out dirs: tune --epilogue fuses it into
// every candidate (checked at every output element), records it, keeps its
// own out dir and compares with oneDNN doing the same; bench --epilogue finds
// that log and every implementation agrees; another epilogue's log is refused.
TEST(Bench, EpilogueEndToEnd) {
  test::TempDir td;
  const std::string in_td = "cd " + td.path() + " && " + CONVTUNE_BIN;
  const std::string common = " --shape " + kShape + kFast + " --threads 1 --json --epilogue bias,add";
  ASSERT_EQ(std::system((in_td + " tune" + common + " --trials 1 --table " + kTable + " > out 2> err").c_str()), 0)
      << test::read_file(td.file("err"));
  auto j = nlohmann::json::parse(test::read_file(td.file("out")));
  EXPECT_EQ(j["epilogue"], "bias,add");
  if (onednn_missing().empty()) EXPECT_TRUE(j["onednn"].contains("gflops")) << j["onednn"];
  const std::string layer = "N1_K32_C16_H8_W8_R3_S3_st1_p1", dir = td.path() + "/convtune-out/" + layer + "-bias-add";
  const nlohmann::json rec = nlohmann::json::parse(test::read_file(dir + "/log.jsonl"));
  EXPECT_EQ(rec["epilogue"], "bias,add");
  EXPECT_EQ(rec["status"], "ok") << rec;
  EXPECT_NE(test::read_file(dir + "/" + layer + ".h").find("const float *restrict residual, float *restrict output);"),
            std::string::npos);

  ASSERT_EQ(std::system((in_td + " bench" + common + " > out 2> err").c_str()), 0) << test::read_file(td.file("err"));
  j = nlohmann::json::parse(test::read_file(td.file("out")));
  EXPECT_EQ(j["epilogue"], "bias,add");
  EXPECT_EQ(j["log"], "convtune-out/" + layer + "-bias-add/log.jsonl");
  EXPECT_GT(j["convtune"]["gflops"].get<double>(), 0);
  for (const char* lib : {"onednn", "im2col_blas"})
    if (!j[lib].contains("missing")) EXPECT_GT(j[lib]["seconds"].get<double>(), 0) << lib;

  // --repeat 3: three interleaved rounds, one measurement of each implementation in each; the median is kept.
  ASSERT_EQ(std::system((in_td + " bench --shape " + kShape +
                         " --min-repeat-ms 1 --repeat 3 --threads 1 --json --epilogue bias,add > out 2> err")
                            .c_str()),
            0)
      << test::read_file(td.file("err"));
  EXPECT_NE(test::read_file(td.file("err")).find(" in 3 interleaved rounds on CPU "), std::string::npos)
      << test::read_file(td.file("err"));
  j = nlohmann::json::parse(test::read_file(td.file("out")));
  for (const char* lib : {"convtune", "onednn", "im2col_blas"}) {
    if (j[lib].contains("missing")) continue;
    std::vector<double> v = j[lib]["samples"].get<std::vector<double>>();
    ASSERT_EQ(v.size(), 3u) << lib;
    // Each sample with the clock probe's speed beside it: wall time = sample x reference / probe, or the
    // sample itself where a disturbed probe would have put the call above the peak (time_interleaved keeps
    // the wall-clock time then). wall_seconds is the median of the three wall times under one such reading.
    const std::vector<double> probe = j[lib]["probe_gflops"].get<std::vector<double>>();
    ASSERT_EQ(probe.size(), 3u) << lib;
    for (double p : probe) EXPECT_GT(p, 0) << lib;
    const double got = j[lib]["wall_seconds"].get<double>();
    bool matched = false;
    for (int kept = 0; kept < 8 && !matched; ++kept) {  // bit i: sample i is its wall-clock time
      std::vector<double> wall;
      for (size_t i = 0; i < 3; ++i)
        wall.push_back((kept >> i) & 1 ? v[i] : v[i] * j["peak_gflops"].get<double>() / probe[i]);
      std::sort(wall.begin(), wall.end());
      matched = std::abs(got - wall[1]) <= 1e-9 * wall[1];
    }
    EXPECT_TRUE(matched) << lib << ": wall_seconds " << got << " is no reading of the samples";
    std::sort(v.begin(), v.end());
    EXPECT_DOUBLE_EQ(j[lib]["seconds"].get<double>(), v[1]) << lib;
  }

  auto r = run_cli("bench --shape " + kShape + kFast + " --threads 1 --log " + dir + "/log.jsonl");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: log '" + dir +
                       "/log.jsonl' was tuned with --epilogue bias,add, not none; pass --epilogue bias,add, tune with "
                       "--trials N, or use another --log\n");
  r = run_cli("tune --shape " + kShape + kFast + " --trials 2 --threads 1 --resume --table " + kTable + " --log " +
              dir + "/log.jsonl");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: log '" + dir +
                       "/log.jsonl' was tuned with --epilogue bias,add, not none; resume with --epilogue bias,add or "
                       "use another --log\n");
}

TEST(Bench, WrongKernelStopsTheComparison) {
  test::TempDir td;
  auto r = run_cli("tune --shape " + kShape + kFast + " --trials 2 --no-onednn --table " + kTable + " --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("bench --shape " + kShape + kFast + " --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // tests/execution/fault_cc.sh as CC spoils one output element of convtune's kernel (<function>.c).
  std::string cmd = "env CC=" + std::string(CONVTUNE_SOURCE_DIR) +
                    "/tests/execution/fault_cc.sh FAULT_CC_FAULTS=ct_conv_N1_K32_C16_H8_W8_R3_S3_st1_p1:wrong " +
                    std::string(CONVTUNE_BIN) + " bench --shape " + kShape + kFast +
                    " --out " + td.path() + " > " + td.file("out") + " 2> " + td.file("err");
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string err = test::read_file(td.file("err"));
  const std::string head = "convtune: error: convtune's kernel disagrees with the reference at output (n=0,h=0,w=0,k=0): ";
  const std::string tail = "; re-tune the layer or remove the log '" + td.file("log.jsonl") + "'\n";
  EXPECT_EQ(err.rfind(head, 0), 0u) << err;
  ASSERT_GE(err.size(), tail.size());
  EXPECT_EQ(err.substr(err.size() - tail.size()), tail) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_EQ(test::read_file(td.file("out")), "");  // nothing timed, nothing printed
}

TEST(Bench, ErrorLines) {
  test::TempDir td;
  auto r = run_cli("bench --shape " + kShape + kFast + " --out " + td.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: no tuning log '" + td.file("log.jsonl") +
                       "' for N1_K32_C16_H8_W8_R3_S3_st1_p1; tune the layer first (convtune tune) or pass --trials N\n");
  r = run_cli("bench --layer resnet18-12 --shape " + kShape);
  EXPECT_EQ(r.err, "convtune: error: give exactly one of --layer NAME, --network NAME, --shape \"K=..,C=..,H=..,R=..\" or --onnx MODEL\n");
  test::write_file(td.file("other.jsonl"), "");
  r = run_cli("tune --shape K=16,C=16,H=8,R=3" + kFast + " --trials 1 --no-onednn --table " + kTable + " --log " +
              td.file("other.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("bench --shape " + kShape + kFast + " --log " + td.file("other.jsonl"));
  EXPECT_EQ(r.err, "convtune: error: log '" + td.file("other.jsonl") +
                       "' is for shape N=1,K=16,C=16,H=8,W=8,R=3,S=3,stride=1,pad=1, not "
                       "N=1,K=32,C=16,H=8,W=8,R=3,S=3,stride=1,pad=1; use another --log\n");
}

// bench --config: a kernel given by hand (no log, no tune) is checked at every
// output element and timed against the libraries as the log's best would be,
// its canonical text in the report; with a network, several thread counts, a
// log or a tune, or --library, it is refused in one line.
TEST(Bench, ConfigGivenByHand) {
  const int64_t vectors = 32 / load_isa(best_isa()).lanes;  // kShape's K
  const std::string config = fmt::format("[T({},k), T(8,h), T(8,w), T(16,c), U(3,s), U(3,r), V(k)]", vectors);
  std::string typed = config;  // as a user may type it: the report gives the canonical text
  typed.erase(std::remove(typed.begin(), typed.end(), ' '), typed.end());
  auto r = run_cli("bench --shape " + kShape + kFast + " --threads 1 --check-points 0 --json --config '" + typed + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"], config);
  EXPECT_EQ(j["config_given"], true);
  EXPECT_EQ(j["trials"], 0);
  EXPECT_EQ(j["log"], "");
  EXPECT_GT(j["convtune"]["seconds"].get<double>(), 0);
  r = run_cli("bench --shape " + kShape + kFast + " --threads 1 --config '" + config + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" given with --config\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nconvtune kernel: " + config + "\nlog: none (--config)\n"), std::string::npos) << r.out;

  const std::string bench = "bench --shape " + kShape + " --threads 1 ";
  EXPECT_EQ(run_cli(bench + "--config '[T(2,k'").err,
            "convtune: error: config: at column 7: expected ')' to close the specifier, got end of input\n");
  EXPECT_EQ(run_cli("bench --network resnet18 --threads 1 --config '" + config + "'").err,
            "convtune: error: --config is one layer's kernel; give one --layer or --shape\n");
  EXPECT_EQ(run_cli(bench + "--trials 2 --config '" + config + "'").err,
            "convtune: error: --config gives convtune's kernel; --trials is for one from a log or a tune: leave it "
            "out\n");
  EXPECT_EQ(run_cli(bench + "--library no-such-dir --config '" + config + "'").err,
            "convtune: error: --library benches the exported kernels; --config is for convtune's own kernel: leave it "
            "out\n");
  if (available_cpus() >= 2)
    EXPECT_EQ(run_cli("bench --shape " + kShape + " --threads 1,2 --config '" + config + "'").err,
              "convtune: error: --config is one kernel for one thread count; give one --threads count\n");
}

// --processes 3: three `bench --config` processes of the given kernel, their
// times' medians, each one's ratio and every round's sample.
TEST(Bench, FreshProcessesEachMeasureTheWholeComparison) {
  const int64_t vectors = 32 / load_isa(best_isa()).lanes;  // kShape's K
  const std::string config = fmt::format("[T({},k), T(8,h), T(8,w), T(16,c), U(3,s), U(3,r), V(k)]", vectors);
  const std::string bench = "bench --shape " + kShape + " --min-repeat-ms 1 --repeat 2 --threads 1 --config '" +
                            config + "' --processes 3";
  auto r = run_cli(bench + " --json -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["processes"], 3);
  EXPECT_EQ(j["config"], config);
  EXPECT_EQ(j["convtune"]["samples"].size(), 6u);  // 2 rounds in each of 3 processes
  const auto samples = j["convtune"]["samples"].get<std::vector<double>>();
  const double s = j["convtune"]["seconds"].get<double>();
  EXPECT_GE(s, *std::min_element(samples.begin(), samples.end()));
  EXPECT_LE(s, *std::max_element(samples.begin(), samples.end()));
  if (j["onednn"].contains("seconds")) {
    ASSERT_EQ(j["process_ratios"].size(), 3u);
    // The headline is the median of the paired, same-process ratios; the medians' ratio beside it.
    auto ratios = j["process_ratios"].get<std::vector<double>>();
    std::sort(ratios.begin(), ratios.end());
    EXPECT_DOUBLE_EQ(j["ratio_convtune_onednn"].get<double>(), ratios[1]);
    EXPECT_DOUBLE_EQ(j["ratio_of_medians"].get<double>(),
                     j["onednn"]["seconds"].get<double>() / j["convtune"]["seconds"].get<double>());
  } else {
    EXPECT_TRUE(j["process_ratios"].empty());  // no oneDNN here: nothing to compare
  }
  test::expect_three_processes(bench);
  // A process that fails says which and why: tests/execution/fault_cc.sh as CC spoils output[0].
  test::TempDir td;
  const std::string cmd = "env CC=" + std::string(CONVTUNE_SOURCE_DIR) +
                          "/tests/execution/fault_cc.sh FAULT_CC_FAULTS=ct_conv_N1_K32_C16_H8_W8_R3_S3_st1_p1:wrong " +
                          std::string(CONVTUNE_BIN) + " " + bench + " -q > " + td.file("out") + " 2> " + td.file("err");
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 1);
  const std::string err = test::read_file(td.file("err"));
  EXPECT_EQ(err.rfind("convtune: error: bench N1_K32_C16_H8_W8_R3_S3_st1_p1: process 1 of 3 failed (exited with code "
                      "1): convtune's kernel disagrees with the reference at output (n=0,h=0,w=0,k=0): ",
                      0),
            0u)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(test::read_file(td.file("out")), "");
}

// bench --processes merges its processes' --json objects: what bench_json
// writes, bench_from_json reads back, field for field, and refuses what is
// not such an object with one line.
TEST(Bench, JsonReadsBackWhatItWrites) {
  BenchResult r;
  r.layer = "yolo9000-8";
  r.shape = parse_shape("K=20,C=8,H=6,R=3,pad=1");
  r.epilogue = Epilogue::bias_relu;
  r.cpu = 1;
  r.threads = 2;
  r.cpus = {0, 1};
  r.peak_gflops = 234.5;
  r.machine = "Some CPU";
  r.date = "2026-11-26";
  r.log_path = "out/log.jsonl";
  r.trials = 20;
  r.best.config = "[U(7,h), U(2,k), V(k)]";
  r.best.gflops = 99.5;
  r.processes = 3;
  r.process_ratios = {1.01, 0.99, 1.03};
  BenchEntry ct("convtune", "[U(7,h), U(2,k), V(k)]");
  ct.seconds = 2e-3;
  ct.samples = {2e-3, 2.1e-3};
  ct.wall_seconds = 2.05e-3;
  ct.probe_gflops = {230, 231};
  ct.max_error = 1e-6;
  BenchEntry dnn = ct;
  dnn.name = "oneDNN";
  dnn.impl = "brgconv:avx512_core";
  dnn.seconds = 2.2e-3;
  r.entries = {ct, dnn, BenchEntry("im2col+OpenBLAS", "", "no OpenBLAS: install libopenblas-dev")};

  BenchResult b = bench_from_json(bench_json(r));
  EXPECT_EQ(b.layer, r.layer);
  EXPECT_EQ(b.shape.to_string(), r.shape.to_string());
  EXPECT_EQ(b.epilogue, r.epilogue);
  EXPECT_EQ(b.cpu, 1);
  EXPECT_EQ(b.threads, 2);
  EXPECT_EQ(b.cpus, r.cpus);
  EXPECT_EQ(b.peak_gflops, r.peak_gflops);
  EXPECT_EQ(b.machine, r.machine);
  EXPECT_EQ(b.date, r.date);
  EXPECT_EQ(b.log_path, r.log_path);
  EXPECT_EQ(b.trials, 20);
  EXPECT_EQ(b.best.config, r.best.config);
  EXPECT_EQ(b.best.gflops, r.best.gflops);
  EXPECT_FALSE(b.config_given);
  EXPECT_EQ(b.processes, 3);
  EXPECT_EQ(b.process_ratios, r.process_ratios);
  ASSERT_EQ(b.entries.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const BenchEntry &want = r.entries[i], &got = b.entries[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.missing, want.missing);
    EXPECT_EQ(got.impl, want.impl);
    EXPECT_EQ(got.seconds, want.seconds);
    EXPECT_EQ(got.samples, want.samples);
    EXPECT_EQ(got.wall_seconds, want.wall_seconds);
    EXPECT_EQ(got.probe_gflops, want.probe_gflops);
    EXPECT_EQ(got.max_error, want.max_error);
  }
  EXPECT_NEAR(bench_ratio(b), 1.01, 1e-12);       // the median of process_ratios
  EXPECT_NEAR(ratio_of_medians(b), 1.1, 1e-12);   // oneDNN's time over convtune's
  b.process_ratios.clear();                       // one process: the times' ratio is its ratio
  EXPECT_NEAR(bench_ratio(b), 1.1, 1e-12);

  auto error_of = [](const std::string& text) { return test::error_of([&] { bench_from_json(text); }); };
  EXPECT_EQ(error_of("[1, 2]"), "bench's JSON is not a JSON object");
  EXPECT_EQ(error_of("convtune: error: no log"), "bench's JSON is not a JSON object");
  nlohmann::json j = nlohmann::json::parse(bench_json(r));
  j.erase("peak_gflops");
  EXPECT_EQ(error_of(j.dump()).rfind("bench's JSON lacks a field or has a wrong type: ", 0), 0u) << error_of(j.dump());
  j = nlohmann::json::parse(bench_json(r));
  j["convtune"]["samples"] = "fast";
  EXPECT_EQ(error_of(j.dump()).rfind("bench's JSON lacks a field or has a wrong type: ", 0), 0u);
}

// A fresh tune (--trials) then the three timings, as JSON.
TEST(Bench, JsonReportsAllThreeAndTheRealWork) {
  test::TempDir td;
  auto r = run_cli("bench --shape " + kShape + kFast + " --trials 2 --table " + kTable + " --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"layer", "shape", "cpu", "peak_gflops", "machine", "date", "flops", "real_flops", "trials",
                          "config", "convtune", "onednn", "im2col_blas", "libxsmm", "ratio_convtune_onednn"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["trials"], 2);
  EXPECT_LT(j["real_flops"].get<double>(), j["flops"].get<double>());  // 3x3 with padding
  EXPECT_GT(j["convtune"]["gflops"].get<double>(), 0);
  for (const char* lib : {"onednn", "im2col_blas", "libxsmm"}) {
    if (j[lib].contains("missing")) {
      EXPECT_NE(r.err.find(j[lib]["missing"].get<std::string>()), std::string::npos) << r.err;
      continue;
    }
    EXPECT_GT(j[lib]["seconds"].get<double>(), 0) << lib;
    EXPECT_FALSE(j[lib]["impl"].get<std::string>().empty()) << lib;
  }
  if (!j["onednn"].contains("missing")) {
    EXPECT_NEAR(j["ratio_convtune_onednn"].get<double>(),
                j["convtune"]["gflops"].get<double>() / j["onednn"]["gflops"].get<double>(), 1e-9);
  }
  // Memory traffic: the tensors once each over each time, and the triad yardstick, which does no FLOPs.
  const double bytes = 4.0 * (16 * 8 * 8 + 32 * 16 * 9 + 32 * 8 * 8);
  EXPECT_EQ(j["bytes"].get<double>(), bytes);
  EXPECT_NEAR(j["convtune"]["gbs"].get<double>(), bytes / j["convtune"]["seconds"].get<double>() * 1e-9, 1e-9);
  ASSERT_TRUE(j.contains("triad")) << r.out;
  EXPECT_GT(j["triad"]["gbs"].get<double>(), 0);
  EXPECT_GT(j["triad"]["seconds"].get<double>(), 0);
  EXPECT_FALSE(j["triad"].contains("gflops"));
}

// Issue 12: `bench --threads 1,2` tunes and runs once per count in one
// process (a log per count under --out) and ends with the scaling lines.
TEST(Bench, ThreadListPrintsTheScaling) {
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only one CPU";
  test::TempDir td;
  auto r = run_cli("bench --shape " + kShape + kFast + " --trials 2 --table " + kTable + " --threads 1,2 --out " +
                   td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on CPU "), std::string::npos) << r.out;                  // the one-thread run
  EXPECT_NE(r.out.find(", 2 threads each, peak "), std::string::npos) << r.out;  // the two-thread run
  const size_t at = r.out.find("scaling: N1_K32_C16_H8_W8_R3_S3_st1_p1");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream lines(r.out.substr(at));
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_GE(rows.size(), 5u) << r.out;
  EXPECT_NE(rows[1].find("convtune/oneDNN"), std::string::npos) << rows[1];
  EXPECT_EQ(rows[2].substr(0, 9), "      1  ") << rows[2];
  EXPECT_NE(rows[2].find("1.00x"), std::string::npos) << rows[2];  // the first count is the base
  EXPECT_EQ(rows[3].substr(0, 9), "      2  ") << rows[3];
  for (const char* t : {"/t1/log.jsonl", "/t2/log.jsonl"})
    EXPECT_FALSE(test::read_file(td.path() + t).empty()) << t;
  EXPECT_NE(test::read_file(td.path() + "/t2/log.jsonl").find("\"threads\":2"), std::string::npos);
  r = run_cli("bench --shape " + kShape + " --threads 1,2 --log " + td.file("x.jsonl"));
  EXPECT_EQ(r.err, "convtune: error: --log names one file; with several --threads each count keeps its own log under "
                   "--out\n");
}

TEST(Bench, TuneEndsWithTheOnednnComparison) {
  test::TempDir td;
  auto r = run_cli("tune --shape " + kShape + kFast + " --trials 2 --table " + kTable + " --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("onednn"));
  if (onednn_missing().empty()) {
    for (const char* key : {"gflops", "impl", "ratio"}) EXPECT_TRUE(j["onednn"].contains(key)) << key;
    EXPECT_NEAR(j["onednn"]["ratio"].get<double>(), j["best"]["gflops"].get<double>() / j["onednn"]["gflops"].get<double>(),
                1e-9);
  } else {
    EXPECT_TRUE(j["onednn"].is_null());
  }
  r = run_cli("tune --shape " + kShape + kFast + " --trials 3 --resume --table " + kTable + " --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (onednn_missing().empty()) {
    EXPECT_NE(r.out.find("\noneDNN: "), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace convtune::bench_test
