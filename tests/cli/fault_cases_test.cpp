// Issue 60's faults on the command line: input that is not UTF-8 quoted
// escaped in text and JSON, the weak messages of bench, tune and export,
// Ctrl-C during the opening peak measurement, export's one directory and the
// one-Conv ONNX flow (scripts/fault-cases.sh replays them for reading).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "background.h"
#include "convtune/models/onnx_model.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace convtune::fault_cases_test {
namespace {

using test::run_cli;

const std::string kSmall = "K=16,C=8,H=8,R=3";
const std::string kFast = " --trials 2 --top 0 --threads 1 --min-repeat-ms 1 --repeat 1 --no-onednn -q";

// The layer name tune and export give an ad-hoc shape (layers --shape --list).
std::string layer_of(const std::string& shape) {
  auto r = run_cli("layers --shape " + shape + " --list");
  return r.out.substr(0, r.out.find('\t'));
}

TEST(FaultCases, InputThatIsNotUtf8IsQuotedEscapedInTextAndJson) {
  auto r = run_cli("tune --json --layer \"$(printf 'r\\377')\"");
  EXPECT_EQ(r.exit_code, 1);
  const std::string message = "unknown layer 'r\\xFF'; run 'convtune layers' to list them";
  EXPECT_EQ(r.err, "convtune: error: " + message + "\n");
  EXPECT_EQ(r.out, (nlohmann::json{{"error", message}}).dump() + "\n");
  // A full-width letter is quoted whole, not cut in half.
  r = run_cli("bench --json --layer resnet18-12 --config '[\xEF\xBC\xB4(2,w), V(k)]'");
  EXPECT_EQ(r.exit_code, 1);
  const std::string config = "config: at column 2: expected a specifier (R, T, U, V, Lseq, P or F), got "
                             "'\xEF\xBC\xB4'";
  EXPECT_EQ(r.err, "convtune: error: " + config + "\n");
  EXPECT_EQ(r.out, (nlohmann::json{{"error", config}}).dump() + "\n");
}

TEST(FaultCases, WeakMessagesOfBenchAndTune) {
  auto r = run_cli("bench --layer resnet18-12 --config ''");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --config is empty; give a configuration, e.g. \"[T(8,h), T(8,w), T(16,c), "
                   "U(3,s), U(3,r), U(2,k), V(k)]\", or leave out --config to bench the log's best\n");
  r = run_cli("bench --library /nonexistent --epilogue bias");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --library times plain convolutions only (a library exported with --epilogue is "
                   "refused, its baselines have no epilogue); leave out --epilogue and bench a library exported "
                   "without one\n");
  test::TempDir td;
  test::write_file(td.file("file"), "x");
  r = run_cli("tune --shape " + kSmall + " --out " + td.file("file"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --out '" + td.file("file") +
                       "' is a file, not a directory; give a directory for the kernel and its log\n");
}

TEST(FaultCases, BenchConfigWithMoreThreadsThanCpusSaysSo) {
  if (test::run_command("command -v taskset").exit_code != 0) GTEST_SKIP() << "no taskset";
  // AVX2 (8 lanes, hence U(2,k)) runs on every host the suite supports.
  auto r = test::run_command("taskset -c 0 " CONVTUNE_BIN " bench --arch avx2 --shape " + kSmall +
                             " --config '[P(2,h), T(3,r), T(2,h), T(2,c), U(3,s), U(4,c), U(8,w), U(2,h), U(2,k), V(k)]' "
                             "--min-repeat-ms 1 --repeat 1 -q");
  EXPECT_NE(r.err.find("convtune: note: --config runs 2 threads (its P loops) on the 1 CPU this process may use: they "
                       "share it, so the time is not that of 2 cores\n"),
            std::string::npos)
      << r.err;
}

// Ctrl-C during the opening peak measurement: a line (a JSON line with
// --json), exit 130, and neither the lock nor the work dir left.
TEST(FaultCases, CtrlCDuringThePeakStopsWithALine) {
  test::TempDir td;
  fs::create_directories(td.file("tmp"));
  {
    test::ScopedEnv tmp("TMPDIR", td.file("tmp"));
    test::Background b({"tune", "--json", "--shape", kSmall, "--out", td.file("o"), "--trials", "2", "--threads", "1",
                        "--no-onednn", "-q"},
                       td.path());
    // Once the log is locked (just before the runner and its peak), Ctrl-C.
    for (int i = 0; i < 400 && !fs::exists(td.file("o/log.jsonl.lock")) && b.running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    b.signal(SIGINT);
    EXPECT_EQ(b.wait(), 130) << b.err();
    const std::string message = "interrupted while measuring the peak, before any candidate; the log is unchanged: "
                                "run the same command again to tune";
    EXPECT_EQ(b.err(), "convtune: error: " + message + "\n");
    EXPECT_EQ(test::read_file(td.file("out")), (nlohmann::json{{"error", message}}).dump() + "\n");
  }
  EXPECT_FALSE(fs::exists(td.file("o/log.jsonl.lock")));
  EXPECT_TRUE(fs::is_empty(td.file("tmp")));  // the work dir went too
}

// profile the same way: Ctrl-C once its work dir exists (the handlers are in
// place, the driver's build and the opening peak are under way) stops it with
// one line, no journal and no work dir left.
TEST(FaultCases, CtrlCDuringProfilesPeakStopsWithALine) {
  test::TempDir td;
  fs::create_directories(td.file("tmp"));
  {
    test::ScopedEnv tmp("TMPDIR", td.file("tmp"));
    test::Background b({"profile", "--quick", "--out", td.file("t.json"), "-q"}, td.path());
    for (int i = 0; i < 400 && fs::is_empty(td.file("tmp")) && b.running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    b.signal(SIGINT);
    EXPECT_EQ(b.wait(), 130) << b.err();
    EXPECT_EQ(b.err(), "convtune: error: interrupted while measuring the peak, before any microkernel; nothing was "
                       "journaled: run the same command again\n");
  }
  EXPECT_FALSE(fs::exists(td.file("t.json")));
  EXPECT_TRUE(fs::is_empty(td.file("tmp")));
}

// Export replaces its --out as one directory: stale temporary files of
// killed exports go, other files stay; a failed export leaves no --out; a
// finalists.json passed over is said; a one-Conv model's tune --onnx --out
// is what export --onnx --logs reads.
TEST(FaultCases, ExportIsOneDirectoryAndSaysWhatItPassesOver) {
  test::TempDir td;
  const std::string layer = layer_of(kSmall);
  auto r = run_cli("tune --shape " + kSmall + kFast + " --out " + td.file("logs/" + layer));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string args = "export --shape " + kSmall + " --logs " + td.file("logs") + " --name tiny --out " +
                           td.file("lib");
  r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // What killed exports leave: a temporary file in --out, a staging directory beside it.
  test::write_file(td.file("lib/tiny.h.tmp-AbC123"), "partial");
  test::write_file(td.file("lib/README"), "mine");
  fs::create_directories(td.file(".lib.tmp-ZzZ999"));
  char ns[64] = {};  // a dead owner in this pid namespace
  ASSERT_GT(readlink("/proc/self/ns/pid", ns, sizeof ns - 1), 0);
  test::write_file(td.file(".lib.tmp-ZzZ999/.convtune-owner"), std::string("999999999 1 ") + ns + "\n");
  test::write_file(td.file("logs/" + layer + "/finalists.json"), "[1, 2]");
  r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: " + layer + ": '" + td.file("logs/" + layer) +
                       "/finalists.json' is not an object with a \"winner\" string; took the best correct record of "
                       "the log instead (tune again with --resume to re-measure the finalists)\n"),
            std::string::npos)
      << r.out;
  std::set<std::string> names, beside;
  for (const auto& e : fs::directory_iterator(td.file("lib"))) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"README", "libtiny.a", "tiny.h", "tiny.pc", "tinyConfig.cmake"}));
  for (const auto& e : fs::directory_iterator(td.path())) beside.insert(e.path().filename().string());
  EXPECT_EQ(beside, (std::set<std::string>{"lib", "logs"}));
  // A failed export leaves no --out.
  r = run_cli("export --layer resnet18-12 --skip-untuned --logs " + td.file("none") + " --out " + td.file("new"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(fs::exists(td.file("new")));
  // A subdirectory cannot be carried over in one rename: refused before any work.
  fs::create_directories(td.file("lib/sub"));
  r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --out '" + td.file("lib") + "' holds the directory 'sub': export replaces its "
                   "--out as a whole and keeps only its files; give the library a directory of its own (e.g. --out "
                   "lib)\n");
}

TEST(FaultCases, AOneConvModelTunedWithOnnxExportsWithOnnx) {
  if (!onnx_supported()) GTEST_SKIP() << "this convtune was built without the ONNX library (libonnx-dev)";
  test::TempDir td;
  const std::string model = CONVTUNE_SOURCE_DIR "/tests/data/one_conv.onnx";
  auto r = run_cli("tune --onnx " + model + kFast + " --out " + td.file("o"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(td.file("o/one_conv-0/log.jsonl")));
  r = run_cli("export --onnx " + model + " --threads 1 --logs " + td.file("o") + " --out " + td.file("lib"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("exported 1 convolution as one_conv into ", 0), 0u) << r.out;
}

}  // namespace
}  // namespace convtune::fault_cases_test
