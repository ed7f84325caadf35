#pragma once
// Child processes with time limits: the system compiler, and forked children
// that load and run generated code, so a crash or hang in a candidate never
// takes the tuner down.
#include <functional>
#include <string>
#include <vector>

namespace convtune {

struct ProcResult {
  int exit_code = -1;  // valid when exited
  int signal = 0;      // non-zero when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  double seconds = 0;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

/// Runs argv (argv[0] looked up in PATH), capturing its output; kills it
/// after timeout_s seconds. Never throws for a failing command.
ProcResult run_command(const std::vector<std::string>& argv, double timeout_s);

/// Runs body(fd) in a forked child that writes '\n'-terminated lines to fd;
/// on_line sees each line as it arrives. The child is killed when no line has
/// come for idle_timeout_s seconds (timed_out). `lines` holds what arrived.
struct ForkResult {
  std::vector<std::string> lines;
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};
ForkResult run_forked(const std::function<int(int fd)>& body, double idle_timeout_s,
                      const std::function<void(const std::string&)>& on_line = {});

/// Writes a whole line (adds '\n') to fd, retrying short writes.
void write_line(int fd, const std::string& line);

}  // namespace convtune
