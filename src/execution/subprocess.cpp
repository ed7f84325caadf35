// posix_spawn with close-on-exec pipes and poll-based time limits.
#include "convtune/execution/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

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
// reset_on_data says so) / `idle` seconds in total. Returns false on time-out.
bool pump(int fd, double idle, const std::function<bool(const char*, size_t)>& sink) {
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
    if (sink(buf, size_t(n))) deadline = now_s() + idle;
  }
}

// Starts argv with stdout and stderr on a fresh pipe, pumps its output into
// sink (which says whether the idle limit restarts), kills the process group
// on time-out and reaps it.
ProcResult spawn_and_pump(const std::vector<std::string>& argv, double timeout_s,
                          const std::function<bool(const char*, size_t)>& sink) {
  ProcResult r;
  const double t0 = now_s();
  if (argv.empty()) {
    r.exit_code = 127;
    r.output = "empty command";
    return r;
  }
  // Everything the child needs exists before it starts.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    r.exit_code = 127;
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);  // dup2 clears close-on-exec on 1 and 2 only
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a time-out kills the compiler's children too, and
  // the terminal's Ctrl-C reaches only the tuner, which decides when to stop.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) sigaddset(&dflt, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dflt);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    r.exit_code = 127;
    r.output = fmt::format("cannot run '{}': {}", argv[0], std::strerror(err));
    r.lines.push_back(r.output);
    r.seconds = now_s() - t0;
    return r;
  }
  if (!pump(fds[0], timeout_s, sink)) {
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

}  // namespace

ProcResult run_command(const std::vector<std::string>& argv, double timeout_s) {
  std::string out;
  ProcResult r = spawn_and_pump(argv, timeout_s, [&](const char* p, size_t n) {
    out.append(p, n);
    return false;  // the limit is on the total time
  });
  if (!out.empty()) r.output = out;
  return r;
}

ProcResult run_lines(const std::vector<std::string>& argv, double idle_timeout_s,
                     const std::function<void(const std::string&)>& on_line) {
  std::string partial;
  std::vector<std::string> lines;
  ProcResult r = spawn_and_pump(argv, idle_timeout_s, [&](const char* p, size_t n) {
    partial.append(p, n);
    bool any = false;
    for (size_t pos; (pos = partial.find('\n')) != std::string::npos;) {
      lines.push_back(partial.substr(0, pos));
      partial.erase(0, pos + 1);
      if (on_line) on_line(lines.back());
      any = true;
    }
    return any;
  });
  if (!partial.empty()) lines.push_back(partial);
  if (!lines.empty()) r.lines = std::move(lines);
  for (const auto& l : r.lines) r.output += l + "\n";
  return r;
}

std::string failure_text(const ProcResult& r, double timeout_s) {
  if (r.timed_out) return fmt::format("no result within {:.0f} s", timeout_s);
  if (r.signal) return fmt::format("killed by signal {} ({})", r.signal, strsignal(r.signal));
  if (r.exit_code != 0) return fmt::format("exited with code {}", r.exit_code);
  return "";
}

}  // namespace convtune
