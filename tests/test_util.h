#pragma once
// Helpers shared by the tests: temporary directories and running the CLI.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "convtune/offline/class_table.h"
#include "convtune/ukernel/codegen.h"
#include "convtune/core/error.h"
#include "convtune/core/machine_id.h"

namespace convtune::test {

/// A fresh directory under $TMPDIR (or /tmp), removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CliResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};
/// Runs the built convtune binary with the given argument string (shell-quoted
/// by the caller) and captures its output.
CliResult run_cli(const std::string& args);
/// Runs a shell command (quoted by the caller) and captures its output and
/// exit code (128 + the signal when one killed it).
CliResult run_command(const std::string& command);

/// `convtune <args>` (a bench with --processes 3, without --json) succeeds,
/// says in its output that its times are the three processes' medians, and
/// announced each process on stderr.
void expect_three_processes(const std::string& args);

/// The shipped class table (configs/tables/<isa>.json) of the ISA convtune
/// picks on this host without --arch: AVX-512 or AVX2-only, and as capped by
/// CONVTUNE_MAX_CPU_ISA.
std::string host_table();

/// Writes text to a file (throws on failure).
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);

/// Microkernel sizes, e.g. uk(2, 1, 1, 7) for k2c1w1h7r1s1.
UkSizes uk(int k, int c, int w, int h, int r = 1, int s = 1);
/// A layout with odd strides, and a conv stride of 2 every other i, so that no
/// index of a microkernel can be silently right; `pad` extra channels per
/// weight row and output pixel (twice that at the end of an output row).
UkLayout odd_layout(const UkSizes& u, int lanes, size_t i, int64_t pad);

/// A profiled avx512 microkernel at `percent` of a 150 GFLOP/s peak.
UkRecord uk_record(UkSizes u, double percent, Status status = Status::ok);

/// An avx512 class table of these records (150 GFLOP/s peak, 80 % threshold),
/// selected and classified as the profiler leaves it.
ClassTable table_of(const std::vector<UkRecord>& records);

/// The machine key of an AVX2 CPU named `model` with `cores` cores (records of several machines).
MachineId test_machine(const std::string& model, int cores);

/// The message of the convtune::Error that f() throws, or "no error".
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// A row of a table-driven error test: an input and the message it gives
/// ("no error" when it is accepted).
struct ErrorCase {
  std::string input;
  std::string message;
};

/// The message of parse_isa on microkernels/isa/<isa>.json after edit(j) has
/// changed its JSON, as of a file "x.json"; "no error" when it parses.
std::string edited_isa_error(const std::string& isa, const std::function<void(nlohmann::json&)>& edit);

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace convtune::test
