#pragma once
// The system C compiler ($CC, default cc) turning generated C into shared
// objects or, with the driver (runner.h), executables, many at a time.
#include <functional>
#include <string>
#include <vector>

namespace convtune {

/// What compiled a table or a kernel, for its provenance.
struct CompilerInfo {
  std::string command;  // "cc"
  std::string version;  // first line of `cc --version`
  std::vector<std::string> flags;
};

struct Compiler {
  std::vector<std::string> command;  // $CC split on blanks ("ccache gcc" works)
  std::vector<std::string> flags;    // ISA flags from the ISA description
  std::vector<std::string> output_flags{"-fPIC", "-shared"};  // what compile_one makes
  std::vector<std::string> link_flags;  // after the source: objects and libraries to link
  double timeout_s = 120;

  /// From $CC (default "cc") and the given flags.
  static Compiler from_env(const std::vector<std::string>& flags);
  /// Command, first line of `--version`, flags; throws Error when the
  /// compiler cannot be run, saying to install one or set CC.
  CompilerInfo info() const;
};

struct CompileJob {
  std::string source;  // .c file
  std::string output;  // .so file or executable
  std::vector<std::string> flags{};  // this file's own, after Compiler::flags (GeneratedKernel::cflags)
};

struct CompileResult {
  bool ok = false;
  bool timed_out = false;
  bool no_output = false;  // the compiler "succeeded" without writing the output (CC=true)
  std::string log;  // compiler output (trimmed)
  double seconds = 0;
};

/// Compiles one C file: flags, the job's flags, then -std=c99, output_flags (by default a
/// shared object), -o output, the source and link_flags. A compiler killed by
/// a signal, or one that writes no output file, fails with a log saying so.
CompileResult compile_one(const Compiler& cc, const CompileJob& job);

/// Compiles jobs on `parallel` threads; on_done(i) is called (serialised)
/// as each finishes. Results are in job order.
std::vector<CompileResult> compile_all(const Compiler& cc, const std::vector<CompileJob>& jobs,
                                       int parallel,
                                       const std::function<void(size_t)>& on_done = {});

/// Default parallelism: the cores but one, at least 1.
int default_jobs();

}  // namespace convtune
