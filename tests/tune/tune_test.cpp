// The online stage end to end through the CLI on a small shape: failures are
// recorded and the search goes on, --resume repeats nothing, a seed
// reproduces its candidates, Ctrl-C keeps the log whole.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "convtune/core/machine.h"
#include "convtune/space/config.h"
#include "convtune/tune/tune.h"
#include "test_util.h"

namespace convtune::tune_test {
namespace {

using test::run_cli;

const std::string kTable = test::host_table();  // this host's ISA, AVX-512 or not
const std::string kFastOptions = " --min-repeat-ms 1 --repeat 1 --check-points 0 -q --table " + kTable;
const std::string kFast = " --shape K=32,C=16,H=8,R=3" + kFastOptions;

// For tests of the log alone: no finalists, no oneDNN.
const std::string kLogOnly = " --top 0 --no-onednn";

std::vector<nlohmann::json> read_log(const std::string& path) {
  std::vector<nlohmann::json> v;
  std::istringstream ss(test::read_file(path));
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

// tests/execution/fault_cc.sh as $CC breaks chosen candidates on purpose.
const std::string kFaultCc = std::string(CONVTUNE_SOURCE_DIR) + "/tests/execution/fault_cc.sh";

TEST(Tune, FailuresAreRecordedAndTheSearchGoesOn) {
  test::TempDir td;
  std::string cmd = "env CC=" + kFaultCc +
                    " FAULT_CC_FAULTS=cand00000:compile_error,cand00001:crash,cand00002:hang,cand00003:wrong,cand00004:killed " +
                    std::string(CONVTUNE_BIN) +
                    " tune" + kFast + " --trials 7 --timeout 3 --out " + td.path() + "/f";
  ASSERT_EQ(std::system((cmd + " > " + td.file("out.txt") + " 2>&1").c_str()), 0) << test::read_file(td.file("out.txt"));
  auto log = read_log(td.path() + "/f/log.jsonl");
  ASSERT_EQ(log.size(), 7u);
  EXPECT_EQ(log[0]["status"], "compile_error");
  EXPECT_EQ(log[1]["status"], "crash");
  EXPECT_EQ(log[2]["status"], "timeout");
  EXPECT_EQ(log[3]["status"], "wrong_result");
  EXPECT_EQ(log[4]["status"], "compile_error");
  EXPECT_EQ(log[5]["status"], "ok");
  EXPECT_EQ(log[6]["status"], "ok");
  // Each failure says what happened.
  EXPECT_NE(log[0]["detail"].get<std::string>().find("fault_cc.sh: an injected compile error"), std::string::npos)
      << log[0];
  EXPECT_EQ(log[1]["detail"].get<std::string>().rfind("killed by signal 4 (Illegal instruction) before reporting", 0), 0u)
      << log[1];
  EXPECT_EQ(log[2]["detail"], "no result within 3 s (--timeout)");
  EXPECT_EQ(log[3]["detail"].get<std::string>().rfind("output element 0 differs from the reference by ", 0), 0u)
      << log[3];
  EXPECT_EQ(log[4]["detail"], "the compiler was killed by signal 9 (Killed)");
  for (const auto& rec : log) {
    for (const char* key : {"format_version", "layer", "shape", "config", "microkernels", "status", "seconds", "gflops",
                            "percent_peak", "compile_seconds", "counters", "table_fingerprint", "seed", "tool_version",
                            "timestamp"})
      EXPECT_TRUE(rec.contains(key)) << key;
  }
  EXPECT_GT(log[5]["gflops"].get<double>(), 0);
  std::string out = test::read_file(td.file("out.txt"));
  EXPECT_NE(out.find("trials: 7 (7 this run), failed: 5"), std::string::npos) << out;
  // The best kernel is delivered as a .c and a .h.
  std::string layer = log[5]["layer"];
  EXPECT_NE(test::read_file(td.path() + "/f/" + layer + ".c").find("void ct_conv_"), std::string::npos);
  EXPECT_NE(test::read_file(td.path() + "/f/" + layer + ".h").find("_PACKED_FLOATS "), std::string::npos);
}

// A compiler that "succeeds" without writing anything is named, before any candidate.
TEST(Tune, CompilerWithoutOutputIsNamed) {
  test::TempDir td;
  std::string cmd = "env CC=true " + std::string(CONVTUNE_BIN) + " tune --arch avx2 --shape K=32,C=16,H=8,R=3 -q " +
                    "--trials 2 --table " + CONVTUNE_SOURCE_DIR + "/configs/tables/avx2.json --out " + td.path() +
                    " 2>" + td.file("err");
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 1);
  std::string err = test::read_file(td.file("err"));
  EXPECT_EQ(err.rfind("convtune: error: the C compiler 'true' produced no output file ", 0), 0u) << err;
  EXPECT_NE(err.find("/driver.o; set CC to a working C compiler\n"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(Tune, ResumeRepeatsNothing) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + kLogOnly + " --trials 3 --seed 5 --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto first = read_log(td.file("log.jsonl"));
  ASSERT_EQ(first.size(), 3u);
  r = run_cli("tune" + kFast + kLogOnly + " --trials 6 --seed 5 --out " + td.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: log '" + td.file("log.jsonl") +
                       "' already holds 3 candidates; pass --resume to continue it or --log to start another\n");
  r = run_cli("tune" + kFast + kLogOnly + " --trials 6 --seed 5 --resume --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trials"], 6);
  EXPECT_EQ(j["new_trials"], 3);
  auto all = read_log(td.file("log.jsonl"));
  ASSERT_EQ(all.size(), 6u);
  std::set<std::string> configs;
  for (size_t i = 0; i < all.size(); ++i) {
    configs.insert(all[i]["config"].get<std::string>());
    if (i < 3) EXPECT_EQ(all[i]["config"], first[i]["config"]);
    EXPECT_EQ(all[i]["trial"], int(i));
  }
  EXPECT_EQ(configs.size(), 6u);
  // Nothing left to do: resuming a complete log measures nothing.
  r = run_cli("tune" + kFast + kLogOnly + " --trials 6 --seed 5 --resume --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["new_trials"], 0);
  EXPECT_EQ(read_log(td.file("log.jsonl")).size(), 6u);
}

// Random sampling draws every candidate from the seed. The adaptive searches
// (hillclimb, the default) step by measured times, so a seed fixes only their
// draws, not their path; they are not part of this promise.
TEST(Tune, SameSeedSameCandidates) {
  test::TempDir td;
  int run = 0;
  auto candidates = [&](const std::string& search, const char* seed, int trials) {
    std::string dir = td.path() + "/" + std::to_string(run++);
    auto r = run_cli("tune" + kFast + kLogOnly + " --search " + search + " --trials " + std::to_string(trials) +
                     " --seed " + seed + " --out " + dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> cfgs;
    for (const auto& rec : read_log(dir + "/log.jsonl")) cfgs.push_back(rec["config"]);
    return cfgs;
  };
  const auto random7 = candidates("random", "7", 4);
  EXPECT_EQ(random7.size(), 4u);
  EXPECT_EQ(random7, candidates("random", "7", 4));
  EXPECT_NE(random7, candidates("random", "8", 4));
}

TEST(Tune, JsonSummaryHasTheDocumentedKeys) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 2 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"layer", "shape", "trials", "failed", "wall_s", "peak_gflops", "best"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"config", "gflops", "percent_peak", "seconds"}) EXPECT_TRUE(j["best"].contains(key)) << key;
}

// Issue 12: --threads 2 measures candidates with a P loop on 2 CPUs, against
// twice one core's peak; a log is resumed with the --threads it was made with.
TEST(Tune, ThreadsTwoTunesParallelKernels) {
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only one CPU";
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 2 --top 0 --no-onednn --threads 2 --json --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["threads"], 2);
  const auto log = read_log(td.file("log.jsonl"));
  ASSERT_EQ(log.size(), 2u);
  for (const auto& rec : log) {
    EXPECT_EQ(rec["threads"], 2);
    EXPECT_EQ(rec["config"].get<std::string>().rfind("[P(2,", 0), 0u) << rec["config"];
    EXPECT_EQ(rec["status"], "ok") << rec;
  }
  ASSERT_TRUE(j["best"].is_object());
  EXPECT_NE(test::read_file(j["best"]["kernel_c"].get<std::string>()).find("#pragma omp parallel for"),
            std::string::npos);
  r = run_cli("tune" + kFast + " --trials 3 --top 0 --no-onednn --threads 1 --resume --out " + td.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: log '" + td.file("log.jsonl") +
                       "' was measured with --threads 2, not 1; resume with --threads 2 or use another --log\n");
  // One thread: no P, no "threads" key in the records (the format of one-core logs is unchanged).
  r = run_cli("tune" + kFast + " --trials 2 --top 0 --no-onednn --threads 1 --out " + td.file("one"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& rec : read_log(td.file("one/log.jsonl"))) {
    EXPECT_FALSE(rec.contains("threads"));
    EXPECT_EQ(rec["config"].get<std::string>().find("P("), std::string::npos) << rec["config"];
  }
}

// --start-from: a 2-thread tune measures the 1-thread tune's best first, with a
// P loop added; a log of another shape or a missing one is a one-line error.
// A 5x5 filter: a 3x3 one's best may be a Winograd view, which takes its
// threads from the view, not from a P loop, and so is not lifted.
TEST(Tune, StartFromLiftsTheOneThreadBest) {
  if (available_cpus() < 2) GTEST_SKIP() << "this process may use only one CPU";
  test::TempDir td;
  const std::string fast5 = " --shape K=32,C=16,H=8,R=5" + kFastOptions;
  auto r = run_cli("tune" + fast5 + " --trials 3 --top 0 --no-onednn --threads 1 --search droplet --out " +
                   td.file("t1"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string best;
  double gflops = 0;
  for (const auto& rec : read_log(td.file("t1/log.jsonl")))
    if (rec["status"] == "ok" && rec["gflops"].get<double>() > gflops)
      best = rec["config"], gflops = rec["gflops"].get<double>();
  ASSERT_FALSE(best.empty());
  r = run_cli("tune" + fast5 + " --trials 4 --top 0 --no-onednn --threads 2 --search droplet --start-from " +
              td.file("t1") + " --out " + td.file("t2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto log = read_log(td.file("t2/log.jsonl"));
  ASSERT_EQ(log.size(), 4u);
  // The first record is the best with one loop of it made parallel: without
  // its P and with that P's count put back, the same loop nest.
  const std::string first = log[0]["config"];
  ASSERT_EQ(first.rfind("[P(2,", 0), 0u) << first;
  EXPECT_NE(log[0]["note"].get<std::string>().find("--start-from '" + td.file("t1") + "/log.jsonl': its best, " + best +
                                                   ", measured first in "),
            std::string::npos)
      << log[0]["note"];
  // Its record says where it came from; the search's own candidates carry no origin.
  EXPECT_EQ(log[0]["seed_from"]["by"], "start-from");
  EXPECT_EQ(log[0]["seed_from"]["config"], best);
  EXPECT_EQ(log[0]["seed_from"]["log"], td.file("t1") + "/log.jsonl");
  EXPECT_FALSE(log[3].contains("seed_from"));
  Dim d;
  ASSERT_TRUE(dim_from_char(first[5], &d)) << first;
  // The loops along d (T and P) multiply to the same count; every other loop is unchanged, in order.
  auto split = [&](const std::string& text) {
    std::vector<std::string> others;
    int64_t along = 1;
    for (const Spec& sp : parse_config(text).specs)
      if ((sp.kind == SpecKind::T || sp.kind == SpecKind::P) && sp.dim == d)
        along *= sp.factor;
      else
        others.push_back(to_string(sp));
    return std::make_pair(others, along);
  };
  EXPECT_EQ(split(first), split(best)) << first << " vs " << best;
  r = run_cli("tune --shape K=32,C=16,H=8,R=1 --trials 2 --threads 2 --start-from " + td.file("t1") + " --out " +
              td.file("other"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --start-from: log '" + td.file("t1/log.jsonl") +
                       "' is for shape N=1,K=32,C=16,H=8,W=8,R=5,S=5,stride=1,pad=2, not "
                       "N=1,K=32,C=16,H=8,W=8,R=1,S=1,stride=1,pad=0; give a log of this layer\n");
  r = run_cli("tune" + kFast + " --trials 2 --start-from " + td.file("nowhere") + " --out " + td.file("x"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --start-from: no file or directory '" + td.file("nowhere") +
                       "'; give the log, or the --out directory, of an earlier tune of N1_K32_C16_H8_W8_R3_S3_st1_p1\n");
}

TEST(Tune, DefaultOutDirNamesThreadsAndEpilogue) {
  EXPECT_EQ(default_out_dir("resnet18-2", 1), "convtune-out/resnet18-2");
  EXPECT_EQ(default_out_dir("resnet18-2", 2), "convtune-out/resnet18-2-t2");
  EXPECT_EQ(default_out_dir("resnet18-2", 1, Epilogue::bias_relu), "convtune-out/resnet18-2-bias-relu");
  EXPECT_EQ(default_out_dir("resnet18-2", 2, Epilogue::bias_add), "convtune-out/resnet18-2-bias-add-t2");
}

TEST(Tune, BadShapesAndLayers) {
  auto r = run_cli("tune --shape K=0,C=3,H=8,R=3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("convtune: error: shape: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("K"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = run_cli("tune --layer yolo9000-7");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("convtune: error: unknown layer 'yolo9000-7'", 0), 0u) << r.err;
  r = run_cli("tune --layer yolo9000-12 --shape K=1,C=1,H=1,R=1");
  EXPECT_EQ(r.err, "convtune: error: give exactly one of --layer NAME, --network NAME, --shape \"K=..,C=..,H=..,R=..\" or --onnx MODEL\n");
  r = run_cli("tune --shape K=32,C=16,H=8,R=3 --search annealing");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("convtune: error: unknown --search 'annealing'; choose one of: random", 0), 0u) << r.err;
}

// SIGINT mid-run: the tuner stops cleanly, the log stays whole, exit 130.
TEST(Tune, InterruptKeepsTheLogWhole) {
  test::TempDir td;
  std::string log = td.file("log.jsonl");
  std::string script = std::string(CONVTUNE_BIN) + " tune" + kFast + " --trials 500 --out " + td.path() +
                       " > " + td.file("out.txt") + " 2>&1 & pid=$!; "
                       "for i in $(seq 600); do [ -f " + log + " ] && [ $(wc -l < " + log + ") -ge 3 ] && break; sleep 0.1; done; "
                       "kill -INT $pid; wait $pid; echo $? > " + td.file("rc");
  std::system(("bash -c '" + script + "'").c_str());
  EXPECT_EQ(test::read_file(td.file("rc")), "130\n") << test::read_file(td.file("out.txt"));
  auto recs = read_log(log);  // every line parses
  EXPECT_GE(recs.size(), 3u);
  EXPECT_LT(recs.size(), 500u);
  EXPECT_NE(test::read_file(td.file("out.txt")).find("interrupted:"), std::string::npos);
}

}  // namespace
}  // namespace convtune::tune_test
