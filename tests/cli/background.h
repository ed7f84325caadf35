#pragma once
// The convtune binary started in the background, for tests that kill or
// interrupt it at a chosen moment.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_util.h"

namespace convtune::test {

// The convtune binary started in the background, its output in files.
class Background {
 public:
  // `limit_bytes` > 0: RLIMIT_FSIZE, so that a write fails as on a full disk.
  Background(const std::vector<std::string>& args, const std::string& dir, rlim_t limit_bytes = 0)
      : out_(dir + "/out"), err_(dir + "/err") {
    std::vector<std::string> all = {CONVTUNE_BIN};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      int o = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int n = open("/dev/null", O_RDONLY);
      if (o < 0 || e < 0 || n < 0) _exit(127);
      dup2(o, 1);
      dup2(e, 2);
      dup2(n, 0);
      if (limit_bytes > 0) {
        ::signal(SIGXFSZ, SIG_IGN);  // kept across exec: the write fails with EFBIG instead
        rlimit lim{limit_bytes, limit_bytes};
        setrlimit(RLIMIT_FSIZE, &lim);
        setenv("TMPDIR", (dir + "/tmp").c_str(), 1);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !done_) {
      kill(pid_, SIGKILL);
      wait();
    }
  }
  bool running() {
    if (done_) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) finish(st);
    return !done_;
  }
  // The exit code, 128 + signal when killed.
  int wait() {
    int st = 0;
    if (!done_ && waitpid(pid_, &st, 0) == pid_) finish(st);
    return code_;
  }
  void signal(int sig) { kill(pid_, sig); }
  std::string err() const { return test::read_file(err_); }

 private:
  void finish(int st) {
    done_ = true;
    code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  std::string out_, err_;
  pid_t pid_ = -1;
  bool done_ = false;
  int code_ = -1;
};

}  // namespace convtune::test
