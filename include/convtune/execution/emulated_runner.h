#pragma once
// The second way to build and run generated code, next to the native one
// (compile_all + run_candidate in runner.h, profile's pinned children,
// peak.h): for an ISA of another architecture, the generated C is
// cross-compiled ($CROSS_CC) with a driver main() (microkernels/
// emulated_driver.c) into static executables run under qemu-user. Results are
// checked as natively; timings are not meaningful.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convtune/offline/class_table.h"
#include "convtune/execution/compiler.h"
#include "convtune/core/isa.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/runner.h"
#include "convtune/offline/ukernel_codegen.h"
#include "convtune/execution/workdir.h"

namespace convtune {

/// How to run the ISA's code here: false natively (the CPU runs it, whatever
/// `emulate` says); true under emulation (another architecture, `emulate`
/// given). Throws Error with the fix otherwise.
bool use_emulation(const Isa& isa, bool emulate);

/// What is missing to emulate the ISA here (cross compiler, its C library,
/// the emulator), tried by building and running a small program; "" when
/// nothing is.
std::string emulation_missing(const Isa& isa);

/// A microkernel instance to check: its sizes and the layout baked into it.
struct UkCase {
  UkSizes u;
  UkLayout l;
};

class EmulatedRunner {
 public:
  /// Throws Error naming the packages to install when emulation_missing.
  explicit EmulatedRunner(const Isa& isa);
  CompilerInfo compiler_info() const { return cc_.info(); }
  const std::string& emulator() const { return isa_.emulation.qemu; }
  /// "none: emulated under qemu-aarch64 (timings not meaningful)"
  std::string counter_names() const;

  /// compile_all's counterpart for whole convolutions defining `symbol`.
  std::vector<CompileResult> build_convs(const std::vector<CompileJob>& jobs, const std::string& symbol,
                                         int parallel) const;
  /// Writes the operands and reference values that run_conv checks against.
  void set_problem(const ProblemData& p);
  /// run_candidate's counterpart: verify at the problem's check points, then time.
  RunResult run_conv(const std::string& exe, const TimingProtocol& protocol, double timeout_s) const;

  /// compile_all's counterpart for profile units (C defining ct_profile_fns[]).
  std::vector<CompileResult> build_units(const std::vector<CompileJob>& jobs, int parallel,
                                         const std::function<void(size_t)>& on_done = {}) const;
  /// Profile's measure path: for i in todo, checks ct_profile_fns[i - base]
  /// against the contract's reference (nc_verify steps, overwrite on NaN
  /// garbage, then accumulate) and times nc_time steps; done(i, status,
  /// gflops). A crash or hang loses only the microkernel in flight.
  void measure_unit(const std::string& exe, const std::vector<UkCase>& cases, size_t base,
                    const std::vector<size_t>& todo, int64_t nc_verify, int64_t nc_time,
                    const TimingProtocol& protocol,
                    const std::function<void(size_t, const std::string&, double)>& done) const;

  /// peak.h's loop under the emulator, GFLOP/s (built once).
  double peak_gflops();

 private:
  Isa isa_;
  Compiler cc_;  // the cross compiler; output_flags link with the driver
  WorkDir wd_{"emulated"};
  std::string peak_exe_, data_file_;
};

}  // namespace convtune
