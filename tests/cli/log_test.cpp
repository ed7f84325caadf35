// The tuning log as a user's machine leaves it: killed with SIGKILL at any
// moment, cut by a torn write, edited by hand, shared by two tuners, or
// unwritable. Every case is either repaired or refused with one line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "convtune/core/file_lock.h"
#include "convtune/tune/records.h"
#include "test_util.h"

namespace convtune::log_test {
namespace {

using test::run_cli;

// avx2 with its shipped table runs on every host the suite supports; the log
// alone is under test: no finalists (--top 0), no oneDNN.
const std::string kFast = " --arch avx2 --table " + std::string(CONVTUNE_SOURCE_DIR) +
                          "/configs/tables/avx2.json --shape K=16,C=8,H=8,R=3 --min-repeat-ms 1 --repeat 1 "
                          "--check-points 0 --top 0 --no-onednn -q";
const std::string kShapeText = "N=1,K=16,C=8,H=8,W=8,R=3,S=3,stride=1,pad=1";

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> v;
  std::istringstream ss(test::read_file(path));
  for (std::string line; std::getline(ss, line);) v.push_back(line);
  return v;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  test::write_file(path, text);
}

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

// The lines a killed tuner leaves: every complete line a valid record, the
// trial numbers 0, 1, 2, ...; a torn tail allowed.
size_t check_complete_lines(const std::string& log) {
  LogContents c = read_log(log);  // throws on any invalid complete line
  for (size_t i = 0; i < c.records.size(); ++i) EXPECT_EQ(c.records[i].trial, int64_t(i)) << log;
  return c.records.size();
}

TEST(Log, TornLastLineIsCutOffOnResume) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  auto r = run_cli("tune" + kFast + " --trials 3 --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = test::read_file(log);
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  text.resize(text.size() - 25);  // the last write was cut short
  test::write_file(log, text);
  const size_t torn = text.size() - (text.rfind('\n') + 1);
  r = run_cli("tune" + kFast + " --trials 5 --resume --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "convtune: note: log '" + log + "' ended in a torn line (a killed or failed write); dropped its " +
                       std::to_string(torn) + " bytes\n");
  EXPECT_EQ(check_complete_lines(log), 5u);
  text = test::read_file(log);
  EXPECT_EQ(text.back(), '\n');
  // Resumed again: nothing torn, nothing to do.
  r = run_cli("tune" + kFast + " --trials 5 --resume --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(test::read_file(log), text);
}

TEST(Log, InvalidRecordsAreRefusedWithTheirLine) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  auto r = run_cli("tune" + kFast + " --trials 2 --out " + td.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> good = lines_of(log);
  ASSERT_EQ(good.size(), 2u);
  auto resume_with_line2 = [&](const std::function<void(nlohmann::json&)>& spoil) {
    nlohmann::json j = nlohmann::json::parse(good[1]);
    spoil(j);
    write_lines(log, {good[0], j.dump()});
    return run_cli("tune" + kFast + " --trials 3 --resume --out " + td.path());
  };
  const std::string at = "convtune: error: log '" + log + "' line 2: ";
  r = resume_with_line2([](nlohmann::json& j) { j.erase("status"); });
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, at + "key 'status' is missing; fix or remove that line\n");
  r = resume_with_line2([](nlohmann::json& j) { j["format_version"] = 99; });
  EXPECT_EQ(r.err, at + "format_version 99 is not 1 (written by another convtune version); fix or remove that line\n");
  r = resume_with_line2([](nlohmann::json& j) { j["gflops"] = "12.5"; });
  EXPECT_EQ(r.err, at + "key 'gflops' is a string, not a number; fix or remove that line\n");
  // A configuration that does not tile this shape (C=8): refused when read,
  // not when it becomes the best.
  std::string bad;
  r = resume_with_line2([&](nlohmann::json& j) {
    bad = std::regex_replace(j["config"].get<std::string>(), std::regex("T\\(\\d+,c\\)"), "T(60,c)",
                             std::regex_constants::format_first_only);
    j["config"] = bad;
  });
  ASSERT_NE(bad.find("T(60,c)"), std::string::npos);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind(at + "configuration '" + bad + "' is not valid for " + kShapeText + " (config: ", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_NE(r.err.find("); fix or remove that line\n"), std::string::npos) << r.err;
  // The log is left as it was: nothing appended to a refused log.
  EXPECT_EQ(lines_of(log).size(), 2u);
}

TEST(Log, FullDiskFailsAtTheFirstRecord) {
  test::TempDir td;
  auto r = run_cli("tune" + kFast + " --trials 3 --log /dev/full --out " + td.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "convtune: error: cannot append to log '/dev/full': No space left on device; free some space or "
            "choose another --log\n");
}

// SIGKILL at several moments (before the first record, while measuring,
// while a second tuner is refused): no finished record is lost, every
// complete line is a valid record, and --resume reaches the requested
// trials with each trial number once.
TEST(Log, KillNineLosesNoRecordAndResumeCompletes) {
  test::TempDir td;
  const std::string out = td.file("o"), log = out + "/log.jsonl";
  std::filesystem::create_directories(td.file("tmp"));
  const std::string tune = "TMPDIR=" + td.file("tmp") + " " + std::string(CONVTUNE_BIN) + " tune" + kFast +
                           " --trials 16 --resume --out " + out;
  size_t before = 0;
  for (int lines : {0, 3, 8}) {
    // Wait for `lines` records (0: kill 0.3 s in, during the peak or the first compiles).
    std::string wait = lines == 0 ? "sleep 0.3; "
                                  : "for i in $(seq 1200); do [ -f " + log + " ] && [ $(wc -l < " + log + ") -ge " +
                                        std::to_string(lines) + " ] && break; sleep 0.05; done; ";
    std::string second = lines == 3 ? tune + " > " + td.file("second.out") + " 2> " + td.file("second.err") +
                                          "; echo $? > " + td.file("second.rc") + "; "
                                    : "";
    std::string script = tune + " > " + td.file("first.out") + " 2>&1 & pid=$!; " + wait + second +
                         "kill -KILL $pid; wait $pid; echo $pid > " + td.file("pid");
    std::system(("bash -c " + shell_quote(script)).c_str());
    size_t now = check_complete_lines(log);
    EXPECT_GE(now, before);
    if (lines > 0) EXPECT_GE(now, size_t(lines)) << test::read_file(td.file("first.out"));
    before = now;
    if (lines == 3) {
      std::string pid = test::read_file(td.file("pid"));
      pid.pop_back();
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      std::string err = test::read_file(td.file("second.err"));
      EXPECT_EQ(test::read_file(td.file("second.rc")), "1\n");
      EXPECT_EQ(err.rfind("convtune: error: log '" + log + "' is in use by convtune pid " + pid + " on " + host +
                              " since ",
                          0),
                0u)
          << err;
      EXPECT_NE(err.find("; wait for it to finish or use another --out\n"), std::string::npos) << err;
    }
  }
  auto r = run_cli("tune" + kFast + " --trials 16 --resume --json --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // --json: one line per layer
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trials"], 16);
  LogContents c = read_log(log);
  ASSERT_EQ(c.records.size(), 16u);
  EXPECT_EQ(c.torn_bytes, 0u);
  std::set<int64_t> trials;
  std::set<std::string> configs;
  for (const auto& rec : c.records) {
    trials.insert(rec.trial);
    configs.insert(rec.config);
  }
  EXPECT_EQ(trials.size(), 16u);
  EXPECT_EQ(*trials.rbegin(), 15);
  EXPECT_EQ(configs.size(), 16u);  // nothing measured twice
  EXPECT_FALSE(std::filesystem::exists(log + ".lock"));
}

}  // namespace
}  // namespace convtune::log_test

namespace convtune::log_test {
namespace {

// The lock held by another process (this test) refuses tune and profile at
// once, naming the holder.
TEST(Log, LockedLogAndTableAreRefused) {
  test::TempDir td;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string holder = "is in use by convtune pid " + std::to_string(getpid()) + " on " + host + " since ";
  {
    const std::string log = td.file("log.jsonl");
    FileLock lock(log, "log", "--log");
    auto r = run_cli("tune" + kFast + " --trials 1 --log " + log + " --out " + td.file("o"));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("convtune: error: log '" + log + "' " + holder, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; wait for it to finish or use another --log\n"), std::string::npos) << r.err;
  }
  {
    const std::string table = td.file("t.json");
    FileLock lock(table, "class table", "--out");
    auto r = run_cli("profile --quick -q --arch avx2 --out " + table);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("convtune: error: class table '" + table + "' " + holder, 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; wait for it to finish or use another --out\n"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace convtune::log_test
