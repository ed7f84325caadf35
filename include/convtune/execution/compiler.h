#pragma once
// The system C compiler ($CC, default cc) turning generated C into shared
// objects or, with the driver (runner.h), executables, many at a time.
#include <functional>
#include <string>
#include <vector>

#include "convtune/offline/class_table.h"

namespace convtune {

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

/// Precompiles the intrinsics header `header` (the ISA's, e.g. immintrin.h)
/// into <dir>/ct_intrin.h.gch with cc's flags, `job_flags` and -fPIC, and
/// returns the flags that use it: -fPIC -include <dir>/ct_intrin.h. A compile
/// with other job flags (a macro such as -fopenmp's _REENTRANT) parses the
/// header as before: GCC checks and ignores it. Parsing immintrin.h is about
/// half of compiling a small kernel with GCC (0.4 of 0.9 s), and a tune
/// compiles every candidate and finalist, a profile thousands of units. The
/// generated C still includes the header itself (include guards make that a
/// no-op), so exported kernels need nothing of this. Returns no flags when
/// the compiler made no such file or cannot compile with it: compiles then
/// work as before, only slower. A header that compiled the check is cached
/// (driver_cache.h) under the compiler, its flags, `job_flags` and `header`,
/// so later runs fetch it instead of spending the 1.1 s again.
std::vector<std::string> precompiled_header_flags(const Compiler& cc, const std::string& header,
                                                  const std::string& dir,
                                                  const std::vector<std::string>& job_flags = {});

/// Default parallelism: the cores but one, at least 1.
int default_jobs();

}  // namespace convtune
