// `convtune profile` killed at any moment loses no finished measurement, and
// `profile --resume` measures only the rest (issue 10).

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "convtune/core/isa.h"
#include "convtune/offline/profile.h"
#include "convtune/offline/profile_journal.h"
#include "background.h"
#include "test_util.h"

namespace convtune::profile_resume_test {
namespace {

using nlohmann::json;
using test::Background;

// The complete lines of a journal (a torn tail ignored), each parsed.
std::vector<json> journal_lines(const std::string& path) {
  std::string text;
  try {
    text = test::read_file(path);
  } catch (const std::exception&) {
    return {};
  }
  std::vector<json> out;
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    out.push_back(json::parse(text.substr(pos, nl - pos)));
  return out;
}

// Waits until the journal has `lines` complete lines; false when the run
// ended first or took too long.
bool wait_for_lines(Background& run, const std::string& journal, size_t lines) {
  auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < until) {
    std::string text;
    try {
      text = test::read_file(journal);
    } catch (const std::exception&) {
    }
    if (size_t(std::count(text.begin(), text.end(), '\n')) >= lines) return true;
    if (!run.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

size_t first_pass_entries(const std::vector<json>& lines) {
  size_t n = 0;
  for (const auto& j : lines) n += j["kind"] == "microkernel" && j["pass"] == "first";
  return n;
}

// Every complete line is a valid header (the first) or entry.
void expect_valid(const std::string& journal, const std::map<std::string, UkSizes>& names) {
  EXPECT_EQ(test::error_of([&] { read_journal(journal, names); }), "no error");
}

class ProfileResume : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu_supports(load_isa("avx2"))) GTEST_SKIP() << "this CPU has no AVX2";
    for (const auto& u : quick_subset(load_isa("avx2"))) {
      names[ukernel_name(u, "avx2")] = u;
      // The profile measures every form (profile_stages.h ProfileForm): the plain code and each fence it can take.
      forms += 1 + fence_fits(TapFence::r, u) + fence_fits(TapFence::s, u);
    }
  }
  std::vector<std::string> args(bool resume) const {
    std::vector<std::string> a = {"profile", "--quick", "--arch",  "avx2", "--min-repeat-ms",
                                  "1",       "--repeat", "1",      "--out", table};
    if (resume) a.push_back("--resume");
    return a;
  }
  test::TempDir td;
  const std::string table = td.file("t.json");
  const std::string journal = journal_path(table);
  std::map<std::string, UkSizes> names;
  size_t forms = 0;
};

TEST_F(ProfileResume, KilledAnywhereItResumesAndMeasuresEachMicrokernelOnce) {
  const size_t total = forms;
  ASSERT_GT(forms, names.size()) << "the quick subset has microkernels that take a fence";
  // Its depthwise microkernels are journaled and resumed as the dense ones are (ct_dwkernel_ names).
  ASSERT_TRUE(std::any_of(names.begin(), names.end(), [](const auto& n) { return n.second.dw; }));
  {  // 1. SIGKILL once the header is written: while compiling
    Background run(args(false), td.path());
    ASSERT_TRUE(wait_for_lines(run, journal, 1)) << run.err();
    run.signal(SIGKILL);
    EXPECT_EQ(run.wait(), 128 + SIGKILL);
  }
  expect_valid(journal, names);
  size_t before = journal_lines(journal).size();
  ASSERT_GE(before, 1u);
  {  // 2. SIGKILL in the middle of measuring
    Background run(args(true), td.path());
    ASSERT_TRUE(wait_for_lines(run, journal, before + 4)) << run.err();
    run.signal(SIGKILL);
    EXPECT_EQ(run.wait(), 128 + SIGKILL);
  }
  expect_valid(journal, names);
  // Every unit was compiled before the first measurement, and is kept for the resumes.
  const size_t units = std::distance(std::filesystem::directory_iterator(units_dir(journal)),
                                     std::filesystem::directory_iterator());
  EXPECT_GE(units, 2u);
  // A kill in the middle of a write leaves a torn line: the next resume cuts it.
  const std::string torn = R"({"kind":"microkernel","name":"k2)";
  test::write_file(journal, test::read_file(journal) + torn);
  const std::string with_torn = test::read_file(journal);
  const size_t torn_bytes = with_torn.size() - (with_torn.rfind('\n') + 1);  // a kill may have torn one already
  before = journal_lines(journal).size();
  {  // 3. Ctrl-C: stops after the microkernel in flight, journal whole
    // Run 2 compiled every unit before its first measurement: this run's
    // compiler refuses the units, so a unit it compiled again would be a
    // compile_error in the table below.
    test::write_file(td.file("cc.sh"), "#!/bin/sh\ncase \"$*\" in *unit0*) echo refused >&2; exit 1 ;; esac\n"
                                       "exec cc \"$@\"\n");
    ASSERT_EQ(std::system(("chmod +x " + td.file("cc.sh")).c_str()), 0);
    test::ScopedEnv cc("CC", td.file("cc.sh"));
    Background run(args(true), td.path());
    ASSERT_TRUE(wait_for_lines(run, journal, before + 2)) << run.err();
    run.signal(SIGINT);
    EXPECT_EQ(run.wait(), 130) << run.err();
    const std::string err = run.err();
    EXPECT_NE(err.find("convtune: note: journal '" + journal + "' ended in a torn line (a killed or failed write); "
                       "dropped its " + std::to_string(torn_bytes) + " bytes\n"),
              std::string::npos)
        << err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(err, m, std::regex("convtune: ([0-9]+) units compiled before the interruption "
                                                     "are measured without compiling\n")))
        << err;
    EXPECT_GE(std::stoul(m[1]), 1u);
    EXPECT_LE(std::stoul(m[1]), units);
    const std::string text = test::read_file(journal);
    EXPECT_EQ(text.back(), '\n');  // no torn line after a Ctrl-C
    const size_t kept = journal_lines(journal).size() - 1;
    EXPECT_NE(err.find("convtune: interrupted; " + std::to_string(kept) + " measurements are kept in journal '" +
                       journal + "'; run the same command with --resume to continue\n"),
              std::string::npos)
        << err;
  }
  expect_valid(journal, names);
  const std::vector<json> kept = journal_lines(journal);
  const size_t first = first_pass_entries(kept);
  ASSERT_LT(first, total) << "the quick subset was measured before the kills; nothing left to resume";
  {  // 4. --resume finishes
    Background run(args(true), td.path());
    ASSERT_EQ(run.wait(), 0) << run.err();
    const std::string err = run.err();
    const std::string measured =
        "convtune: this run measured " + std::to_string(total - first) + " microkernel forms (plain and fenced)";
    EXPECT_NE(err.find(measured), std::string::npos) << err;
    EXPECT_NE(err.find("; " + std::to_string(kept.size() - 1) + " measurements came from the journal\n"),
              std::string::npos)
        << err;
  }
  EXPECT_FALSE(std::ifstream(journal).good()) << "the table replaces the journal";
  EXPECT_FALSE(std::filesystem::exists(units_dir(journal))) << "and its units";
  json t = json::parse(test::read_file(table));
  EXPECT_TRUE(t["resumed"].get<bool>());
  EXPECT_NEAR(t["peak"]["start_gflops"].get<double>(), kept[0]["peak_start_gflops"].get<double>(), 0.01);
  std::set<std::string> seen;
  for (const auto& m : t["microkernels"]) {
    EXPECT_TRUE(seen.insert(m["name"].get<std::string>()).second) << m["name"] << " twice";
    EXPECT_TRUE(names.count(m["name"].get<std::string>())) << m["name"];
    EXPECT_EQ(m["status"], "ok") << m["name"];  // no kill shows as a crash
    TapFence f = TapFence::none;  // the fastest form's fence, one the microkernel takes
    if (m.contains("fence"))
      EXPECT_TRUE(fence_from_text(m["fence"].get<std::string>(), &f) &&
                  fence_fits(f, names.at(m["name"].get<std::string>())))
          << m;
  }
  EXPECT_EQ(seen.size(), names.size());
}

TEST_F(ProfileResume, AJournalIsRefusedWithoutResumeOrWhenItDoesNotMatch) {
  ProfileJournalHeader h;
  h.isa = "avx2";
  h.quick = true;
  h.threshold = 0.5;
  h.per_unit = 16;
  h.min_repeat_ms = 1;
  h.repeat = 1;
  h.machine = "Other CPU";
  h.compiler = "cc";
  h.tool_version = CONVTUNE_VERSION;
  h.peak_start_gflops = 100;
  h.created = "2026-11-23T17:00:00Z";
  append_journal(journal, h.to_json());
  std::string cmd;
  for (const auto& a : args(false)) cmd += a + " ";
  auto r = test::run_cli(cmd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: journal '" + journal + "' holds 0 measurements of an unfinished profile; "
                   "pass --resume to continue it or remove it to start over\n");
  r = test::run_cli(cmd + "--resume");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: journal '" + journal + "' was started with --threshold 0.5, not --threshold "
                   "0.8; resume with the same options or remove the journal to start over\n");
  test::write_file(journal, test::read_file(journal) + "{\"kind\":\"microkernel\"}\n");
  r = test::run_cli(cmd + "--resume");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "convtune: error: journal '" + journal + "' line 2: key 'format_version' is missing; fix or "
                   "remove that line, or remove the journal to start over\n");
  EXPECT_FALSE(std::ifstream(table).good());
}

// A write that fails in the temporary directory (here cut short by
// RLIMIT_FSIZE, as a full disk would) is one clear error, not a compile error.
TEST_F(ProfileResume, AFullTemporaryDirectoryIsOneClearError) {
  std::filesystem::create_directories(td.file("tmp"));
  Background run(args(false), td.path(), 8192);
  EXPECT_EQ(run.wait(), 1);
  const std::string err = run.err();
  const std::string head = "convtune: error: cannot write " + td.file("tmp") + "/convtune-profile-";
  EXPECT_EQ(err.rfind(head, 0), 0u) << err;
  EXPECT_NE(err.find("/driver.c: File too large; free space in the temporary directory or set TMPDIR\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_TRUE(std::filesystem::is_empty(td.file("tmp")));  // the work dir is gone
}

// A compiler that runs out of room (tests/execution/fault_cc.sh) is the
// temporary directory's fault: one error that says so, the journal kept.
TEST_F(ProfileResume, ACompilerOnAFullDiskIsOneClearError) {
  const std::string cc = std::string(CONVTUNE_SOURCE_DIR) + "/tests/execution/fault_cc.sh";
  std::string cmd = "env CC=" + cc + " FAULT_CC_FAULTS=unit0001:full " + CONVTUNE_BIN;
  for (const auto& a : args(false)) cmd += " " + a;
  cmd += " -q > " + td.file("out") + " 2> " + td.file("err");
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(test::read_file(td.file("err")),
            "convtune: error: the C compiler '" + cc + "' cannot write its output: No space left on device; free space "
            "in the temporary directory or set TMPDIR\n");
  EXPECT_EQ(journal_lines(journal).size(), 1u);  // the header: --resume continues
  EXPECT_FALSE(std::ifstream(table).good());
}

}  // namespace
}  // namespace convtune::profile_resume_test
