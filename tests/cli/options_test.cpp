// Every argument is checked before any work: one error line naming the
// option and its range, and no table warning in front of it; --json gives
// JSON Lines, and an error as a JSON line too.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace convtune::options_test {
namespace {

using test::run_cli;

const std::string kShape = " --shape K=16,C=8,H=8,R=3";

TEST(CliOptions, NumbersOutOfRangeAreRefusedAtParseTime) {
  test::TempDir td;
  const std::string table = " --out " + td.file("t.json");  // never the user's cache, should a check be missing
  struct Case {
    std::string args, err;
  };
  const std::vector<Case> cases = {
      {"tune" + kShape + " --timeout 0", "--timeout: 0 is out of range; give seconds in (0, 86400]"},
      {"tune" + kShape + " --timeout -5", "--timeout: -5 is out of range; give seconds in (0, 86400]"},
      {"tune" + kShape + " --min-repeat-ms nan",
       "--min-repeat-ms: 'nan' is not a finite number; give milliseconds in (0, 60000]"},
      {"tune" + kShape + " --min-repeat-ms inf",
       "--min-repeat-ms: 'inf' is not a finite number; give milliseconds in (0, 60000]"},
      {"tune" + kShape + " --check-points -1",
       "--check-points: -1 is out of range; give a number of output elements (0 checks all) in [0, 1000000000]"},
      {"tune" + kShape + " --trials 0", "--trials: 0 is out of range; give a number of candidates in [1, 10000000]"},
      {"tune" + kShape + " --trials 2.5", "--trials: '2.5' is not a whole number; give a number of candidates in [1, 10000000]"},
      {"tune" + kShape + " --repeat 0", "--repeat: 0 is out of range; give a number of measurements in [1, 1000]"},
      {"tune" + kShape + " -j 0", "--jobs: 0 is out of range; give a number of parallel compilations in [1, 1024]"},
      {"tune" + kShape + " --cpu -1", "--cpu: -1 is out of range; give a CPU number in [0, 4095]"},
      {"tune" + kShape + " --seed -1", "--seed: -1 is out of range; give a whole number in [0, 18446744073709551615]"},
      {"tune" + kShape + " --pvalue 0", "--pvalue: 0 is out of range; give a significance level in (0, 1]"},
      {"tune" + kShape + " --mutation-rate 1", "--mutation-rate: 1 is out of range; give a probability in [0, 1)"},
      {"tune" + kShape + " --parents 0", "--parents: 0 is out of range; give a number of parents in [1, 10000]"},
      {"bench" + kShape + " --timeout 0", "--timeout: 0 is out of range; give seconds in (0, 86400]"},
      {"tune" + kShape + " --threads 0", "--threads: 0 is out of range; give a number of threads in [1, 4096]"},
      {"tune" + kShape + " --threads 1,2", "--threads: '1,2' is not a whole number; give a number of threads in [1, 4096]"},
      {"bench" + kShape + " --threads 0",
       "--threads: 0 is out of range; give a number of threads in [1, 4096] (or a list such as 1,2)"},
      {"bench" + kShape + " --threads 1,x",
       "--threads: 'x' is not a whole number; give a number of threads in [1, 4096] (or a list such as 1,2)"},
      {"bench" + kShape + " --repeat x", "--repeat: 'x' is not a whole number; give a number of measurements in [1, 1000]"},
      {"bench" + kShape + " --processes 0", "--processes: 0 is out of range; give a number of processes in [1, 100]"},
      {"profile --quick --threshold 2" + table, "--threshold: 2 is out of range; give a fraction of peak such as 0.80 in (0, 1.5]"},
      {"profile --quick --min-repeat-ms 0" + table, "--min-repeat-ms: 0 is out of range; give milliseconds in (0, 60000]"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, "convtune: error: " + c.err + "\n") << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

// A table profiled on another machine always warns; the warning must come
// after every check of the arguments, so that an error is the only line.
TEST(CliOptions, ErrorsComeBeforeTheTableWarning) {
  test::TempDir td;
  auto table = nlohmann::json::parse(test::read_file(std::string(CONVTUNE_SOURCE_DIR) + "/configs/tables/avx2.json"));
  table["machine"]["cpu_model"] = "Some Other CPU";
  table["machine"]["fingerprint"] = "Some Other CPU | avx,avx2,fma";
  test::write_file(td.file("other.json"), table.dump());
  const std::string base = "tune --arch avx2 --table " + td.file("other.json") + kShape;
  struct Case {
    std::string args, err;
  };
  test::write_file(td.file("plain"), "x");
  const std::vector<Case> cases = {
      {" --out " + td.file("o") + " --search annealing", "unknown --search 'annealing'; choose one of: random, droplet, opevo, hillclimb, csa, random-hillclimb"},
      {" --out " + td.file("o") + " --log " + td.path(), "cannot write --log '" + td.path() + "': it is a directory; give a file name"},
      {" --out " + td.file("o") + " --log " + td.file("plain/log.jsonl"), "cannot write --log '" + td.file("plain/log.jsonl") +
                                                    "': cannot create its directory (Not a directory); choose another --log"},
  };
  for (const auto& c : cases) {
    auto r = run_cli(base + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_EQ(r.err, "convtune: error: " + c.err + "\n") << c.args;
  }
  // Where the best kernel goes is checked before the tune, not after it.
  auto r = run_cli(base + " --out " + td.file("plain") + " --log " + td.file("log.jsonl") + " --trials 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: --out '" + td.file("plain") +
                       "' is a file, not a directory; give a directory for the kernel and its log\n");
}

// --epilogue takes one of five spellings; anything else is one line listing them.
TEST(CliOptions, UnknownEpilogueListsTheChoices) {
  for (const char* cmd : {"tune", "bench"}) {
    auto r = run_cli(std::string(cmd) + kShape + " --epilogue foo");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_EQ(r.err, "convtune: error: unknown --epilogue 'foo'; choose one of: none | bias | bias,relu | bias,relu6 | "
                     "bias,add\n")
        << cmd;
    EXPECT_EQ(r.out, "") << cmd;
  }
  auto r = run_cli("tune" + kShape + " --epilogue relu,bias");  // the order is part of the spelling
  EXPECT_EQ(r.err.rfind("convtune: error: unknown --epilogue 'relu,bias'; choose one of: ", 0), 0u) << r.err;
}

TEST(CliOptions, JsonErrorIsAJsonLineOnStdout) {
  auto r = run_cli("tune --json --shape K=0,C=3,H=8,R=3");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  ASSERT_EQ(r.err.rfind("convtune: error: shape: ", 0), 0u) << r.err;
  const std::string message = r.err.substr(17, r.err.size() - 18);
  EXPECT_EQ(r.out, (nlohmann::json{{"error", message}}.dump() + "\n"));
  r = run_cli("tune" + kShape + " --json --timeout 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "{\"error\":\"--timeout: 0 is out of range; give seconds in (0, 86400]\"}\n");
  r = run_cli("tune" + kShape + " --timeout 0");  // without --json stdout stays empty
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace convtune::options_test

namespace convtune::options_test {
namespace {

// std::bad_alloc (here a shape whose buffers exceed the address-space limit)
// is one error line, and the work directory is removed on the way out.
// gcc defines __SANITIZE_ADDRESS__, clang answers __has_feature (which gcc 12
// cannot parse in the same #if).
#if defined(__SANITIZE_ADDRESS__)
#define CT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_UNDER_ASAN 1
#endif
#endif
#ifndef CT_UNDER_ASAN
#define CT_UNDER_ASAN 0
#endif

TEST(CliFailures, OutOfMemoryIsOneLineAndCleansUp) {
#if CT_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space, so 'ulimit -v' stops the binary before "
                  "main; the Release run checks this";
#endif
  test::TempDir td;
  std::filesystem::create_directories(td.file("tmp"));
  const std::string cmd = "ulimit -v 1500000; TMPDIR=" + td.file("tmp") + " " + CONVTUNE_BIN +
                          " tune --arch avx2 --table " + CONVTUNE_SOURCE_DIR +
                          "/configs/tables/avx2.json --shape K=64,C=64,H=3000,R=3 --trials 1 -q --no-onednn --out " +
                          td.file("o") + " 2> " + td.file("err");
  int status = std::system(("bash -c '" + cmd + "'").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string err = test::read_file(td.file("err"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // A size limit on shapes, where there is one, refuses it first.
  EXPECT_TRUE(err.rfind("convtune: error: out of memory; try a smaller shape (--shape) or free some memory\n", 0) == 0 ||
              err.rfind("convtune: error: shape", 0) == 0)
      << err;
  EXPECT_TRUE(std::filesystem::is_empty(td.file("tmp")));
}

}  // namespace
}  // namespace convtune::options_test
