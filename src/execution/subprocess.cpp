// fork/exec with pipes and poll-based time limits.
#include "convtune/execution/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace convtune {

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void reap(pid_t pid, int* exit_code, int* sig) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) *exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) *sig = WTERMSIG(status);
}

// Reads from fd until EOF or until no data came for `idle` seconds (when
// reset_on_data) / `idle` seconds in total. Returns false on time-out.
bool pump(int fd, double idle, bool reset_on_data, const std::function<void(const char*, size_t)>& sink) {
  double deadline = now_s() + idle;
  char buf[65536];
  for (;;) {
    double left = deadline - now_s();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, int(left * 1000) + 1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return true;
    }
    if (rc == 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    sink(buf, size_t(n));
    if (reset_on_data) deadline = now_s() + idle;
  }
}

}  // namespace

void write_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= size_t(n);
  }
}

ProcResult run_command(const std::vector<std::string>& argv, double timeout_s) {
  ProcResult r;
  double t0 = now_s();
  int fds[2];
  if (pipe(fds) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // so a time-out kills the compiler's own children too
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::string msg = "cannot run '" + argv[0] + "': " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    r.output = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  bool done = pump(fds[0], timeout_s, false, [&](const char* p, size_t n) { r.output.append(p, n); });
  if (!done) {
    r.timed_out = true;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  close(fds[0]);
  reap(pid, &r.exit_code, &r.signal);
  if (r.timed_out) r.signal = 0;
  r.seconds = now_s() - t0;
  return r;
}

ForkResult run_forked(const std::function<int(int fd)>& body, double idle_timeout_s,
                      const std::function<void(const std::string&)>& on_line) {
  ForkResult r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.exit_code = -1;
    return r;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    signal(SIGINT, SIG_IGN);  // the parent decides when to stop
    int rc = 1;
    try {
      rc = body(fds[1]);
    } catch (...) {
      rc = 3;
    }
    close(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return r;
  }
  std::string partial;
  bool done = pump(fds[0], idle_timeout_s, true, [&](const char* p, size_t n) {
    partial.append(p, n);
    size_t pos;
    while ((pos = partial.find('\n')) != std::string::npos) {
      std::string line = partial.substr(0, pos);
      partial.erase(0, pos + 1);
      r.lines.push_back(line);
      if (on_line) on_line(line);
    }
  });
  if (!done) {
    r.timed_out = true;
    kill(pid, SIGKILL);
  }
  close(fds[0]);
  reap(pid, &r.exit_code, &r.signal);
  if (r.timed_out) r.signal = 0;
  return r;
}

}  // namespace convtune
