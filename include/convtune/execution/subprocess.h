#pragma once
// Child processes with time limits: the system compiler and the driver
// executables that run generated code, so a crash or hang in a candidate never
// takes the tuner down. Children are started with posix_spawn (nothing runs in
// a forked copy of the multi-threaded tuner) in their own process group, and
// every pipe is close-on-exec, so a compiler started by one compile_all thread
// never holds the pipe of another.
#include <functional>
#include <string>
#include <vector>

namespace convtune {

struct ProcResult {
  int exit_code = -1;  // valid when exited
  int signal = 0;      // non-zero when killed by a signal
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  std::vector<std::string> lines;  // run_lines: the '\n'-terminated lines (and a last partial one)
  double seconds = 0;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

/// Runs argv (argv[0] looked up in PATH), capturing its output; kills its
/// process group after timeout_s seconds. Never throws for a failing command;
/// a command that cannot be started exits 127 with the reason as its output.
ProcResult run_command(const std::vector<std::string>& argv, double timeout_s);

/// Like run_command, but the output is lines: on_line sees each as it arrives,
/// and the limit is idle_timeout_s without a new line (each result line resets it).
ProcResult run_lines(const std::vector<std::string>& argv, double idle_timeout_s,
                     const std::function<void(const std::string&)>& on_line = {});

/// Why the process ended badly: "no result within N s", "killed by signal 11
/// (Segmentation fault)", "exited with code 2"; "" for ok().
std::string failure_text(const ProcResult& r, double timeout_s);

}  // namespace convtune
