// Temporary work dirs: removed at the end, and those a killed convtune left
// behind are removed by the next one (only ours, only when the owner is gone).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "convtune/execution/subprocess.h"
#include "convtune/execution/workdir.h"
#include "test_util.h"

namespace convtune::workdir_test {
namespace {

namespace fs = std::filesystem;

// A pid that has just exited (a shell that printed its own pid).
std::string dead_pid() {
  ProcResult r = run_command({"sh", "-c", "echo $$"}, 10);
  return r.output.substr(0, r.output.find('\n'));
}

void make_dir(const std::string& dir, const std::string& owner) {
  fs::create_directories(dir);
  test::write_file(dir + "/cand00000.c", "int x;\n");
  if (!owner.empty()) test::write_file(dir + "/" + kWorkDirOwnerFile, owner + "\n");
}

class TmpdirScope {
 public:
  explicit TmpdirScope(const std::string& dir) {
    const char* old = std::getenv("TMPDIR");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirScope() {
    if (had_)
      setenv("TMPDIR", old_.c_str(), 1);
    else
      unsetenv("TMPDIR");
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(WorkDir, RecordsItsOwnerAndIsRemovedAtTheEnd) {
  test::TempDir td;
  TmpdirScope scope(td.path());
  std::string path;
  {
    WorkDir wd("tune");
    path = wd.path();
    EXPECT_EQ(path.rfind(td.path() + "/convtune-tune-", 0), 0u) << path;
    EXPECT_EQ(test::read_file(path + "/" + kWorkDirOwnerFile), workdir_owner_text() + "\n");
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(WorkDir, StaleDirsOfDeadOwnersAreRemoved) {
  test::TempDir td;
  const std::string dead = td.file("convtune-tune-dead01"), reused = td.file("convtune-tune-reuse1"),
                    live = td.file("convtune-profile-live01"), unowned = td.file("convtune-tune-old001"),
                    other = td.file("other-tune-dead01");
  // Owner texts as this process writes them, with another pid or start time.
  const std::string ns = workdir_owner_text().substr(workdir_owner_text().rfind(' '));
  const std::string elsewhere = td.file("convtune-tune-other1");
  make_dir(dead, dead_pid() + " 12345" + ns);
  make_dir(reused, "1 0" + ns);  // pid 1 lives, but started at another time: its pid was reused
  make_dir(elsewhere, dead_pid() + " 12345 pid:[1]");  // another pid namespace: not ours to judge
  make_dir(live, workdir_owner_text());
  make_dir(unowned, "");  // an older convtune's dir, or one being made: not ours to judge
  make_dir(other, dead_pid() + " 12345" + ns);
  TmpdirScope scope(td.path());
  {
    WorkDir wd("tune");
    EXPECT_FALSE(fs::exists(dead));
    EXPECT_FALSE(fs::exists(reused));
    EXPECT_TRUE(fs::exists(live + "/cand00000.c"));
    EXPECT_TRUE(fs::exists(unowned + "/cand00000.c"));
    EXPECT_TRUE(fs::exists(other + "/cand00000.c"));
    EXPECT_TRUE(fs::exists(elsewhere + "/cand00000.c"));
    EXPECT_TRUE(fs::exists(wd.path()));
  }
  EXPECT_EQ(remove_stale_workdirs(td.path()), 0);
}

// A convtune killed with SIGKILL mid-tune leaves its dir; the next run removes it.
TEST(WorkDir, KilledTuneLeavesNothingBehindTheNextRun) {
  test::TempDir td;
  const std::string tmp = td.file("tmp");
  fs::create_directories(tmp);
  const std::string tune = std::string(CONVTUNE_BIN) + " tune --shape K=32,C=16,H=8,R=3 --min-repeat-ms 1 --repeat 1 "
                           "-q --trials 500 --no-onednn --arch avx2 --table " + CONVTUNE_SOURCE_DIR + "/configs/tables/avx2.json";
  std::string script = "TMPDIR=" + tmp + " " + tune + " --out " + td.file("a") + " >/dev/null 2>&1 & pid=$!; " +
                       "for i in $(seq 600); do [ -f " + td.file("a/log.jsonl") + " ] && break; sleep 0.1; done; " +
                       "kill -KILL $pid; wait $pid 2>/dev/null";
  std::system(("bash -c '" + script + "'").c_str());
  int left = 0;
  for (const auto& e : fs::directory_iterator(tmp)) left += e.path().filename().string().rfind("convtune-tune-", 0) == 0;
  ASSERT_EQ(left, 1) << "the killed tune should have left its work dir";
  TmpdirScope scope(tmp);
  { WorkDir wd("tune"); }
  // (The compilers the killed tune had started may have left their own temporary files.)
  for (const auto& e : fs::directory_iterator(tmp))
    EXPECT_NE(e.path().filename().string().rfind("convtune-", 0), 0u) << "left: " << e.path();
}

}  // namespace
}  // namespace convtune::workdir_test
