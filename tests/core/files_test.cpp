// Files convtune writes: whole or untouched, with the real reason when not;
// the lock that keeps a second convtune off a log or table.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "convtune/core/file_lock.h"
#include "convtune/core/files.h"
#include "test_util.h"

namespace convtune::files_test {
namespace {

using test::error_of;

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

TEST(Files, WriteFileAtomicReplacesWholeFiles) {
  test::TempDir td;
  const std::string p = td.file("sub/k.c");
  write_file_atomic(p, "first\n", "the best kernel", "choose another --out");
  write_file_atomic(p, "second\n", "the best kernel", "choose another --out");
  EXPECT_EQ(test::read_file(p), "second\n");
  EXPECT_EQ(files_in(td.file("sub")), 1u);  // no temporary file left
  EXPECT_EQ(std::filesystem::status(p).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::others_read);
}

TEST(Files, WriteFileAtomicReportsWhyAndLeavesNothing) {
  test::TempDir td;
  std::filesystem::create_directories(td.file("k.c"));  // a directory in the way
  EXPECT_EQ(error_of([&] { write_file_atomic(td.file("k.c"), "x", "the best kernel", "choose another --out"); }),
            "cannot write the best kernel to '" + td.file("k.c") + "': Is a directory; choose another --out");
  test::write_file(td.file("plain"), "x");
  EXPECT_EQ(error_of([&] { write_file_atomic(td.file("plain/k.c"), "x", "the best kernel", "fix"); }),
            "cannot write the best kernel to '" + td.file("plain/k.c") + "': Not a directory; fix");
  EXPECT_EQ(files_in(td.path()), 2u);
}

// A write cut short (here by RLIMIT_FSIZE, as a full disk would) is reported
// with the errno of the write that failed, not a stale one, and the target
// is left untouched.
TEST(Files, ShortWriteGivesTheRealErrno) {
  test::TempDir td;
  const std::string p = td.file("k.c");
  test::write_file(p, "old\n");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &lim);
    std::string msg = error_of([&] { write_file_atomic(p, std::string(100000, 'x'), "the best kernel", "fix"); });
    ssize_t n = write(fds[1], msg.data(), msg.size());
    _exit(n == ssize_t(msg.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(msg, "cannot write the best kernel to '" + p + "': File too large; fix");
  EXPECT_EQ(test::read_file(p), "old\n");
  EXPECT_EQ(files_in(td.path()), 1u);
}

// Work-dir files: written whole, and a failure names the file and the fix.
TEST(Files, WriteWorkFileSaysWhatToFree) {
  test::TempDir td;
  write_work_file(td.file("unit0000.c"), "int x;\n");
  EXPECT_EQ(test::read_file(td.file("unit0000.c")), "int x;\n");
  test::write_file(td.file("plain"), "x");
  EXPECT_EQ(error_of([&] { write_work_file(td.file("plain/unit0000.c"), "x"); }),
            "cannot write " + td.file("plain/unit0000.c") +
                ": Not a directory; free space in the temporary directory or set TMPDIR");
  EXPECT_EQ(files_in(td.path()), 2u);
}

// A child holds the lock: we are refused with its pid and host; once it is
// killed with SIGKILL the lock is free again.
TEST(FileLock, SecondHolderIsRefusedUntilTheFirstDies) {
  test::TempDir td;
  const std::string log = td.file("log.jsonl");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FileLock lock(log, "log", "--out");
    char c = 1;
    ssize_t n = write(fds[1], &c, 1);
    (void)n;
    pause();
    _exit(0);
  }
  close(fds[1]);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  close(fds[0]);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string msg = error_of([&] { FileLock again(log, "log", "--out"); });
  const std::string head = "log '" + log + "' is in use by convtune pid " + std::to_string(pid) + " on " + host + " since ";
  EXPECT_EQ(msg.rfind(head, 0), 0u) << msg;
  EXPECT_NE(msg.find("Z; wait for it to finish or use another --out"), std::string::npos) << msg;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  {
    FileLock mine(log, "log", "--out");
    EXPECT_NE(test::read_file(log + ".lock").find("\"pid\":" + std::to_string(getpid())), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(log + ".lock"));  // removed by its holder
}

}  // namespace
}  // namespace convtune::files_test
