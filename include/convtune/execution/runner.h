#pragma once
// The one way convtune runs generated code: each generated C file (a
// convolution candidate, a profile unit, the peak loop) is linked with the
// driver (microkernels/driver.c, microkernels/timing.c) into an executable,
// native ($CC, with PAPI) or cross-compiled ($CROSS_CC, static) for an ISA of
// another architecture. The executable runs in its own process -- directly, or
// under qemu-user -- pins itself, checks the code against a reference, times it
// with the one timing protocol and reports one JSON object per line. A crash,
// hang, wrong result or failure to start is a status, never the tuner's death.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "convtune/core/aligned.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/status.h"
#include "convtune/execution/subprocess.h"
#include "convtune/ukernel/codegen.h"

namespace convtune {

/// How long one measurement of the peak loop lasts by default (ms).
inline constexpr double kPeakMinMs = 200;
/// The peak loop's measurement length for candidates timed with min_ms: twice
/// theirs, at most kPeakMinMs (at the defaults, 100 -> 200). A quick run
/// (--min-repeat-ms 1, as the tests use) does not spend seconds on a peak
/// that its candidates' figures cannot resolve anyway.
inline double peak_min_ms(double candidate_min_ms) { return std::min(kPeakMinMs, 2 * candidate_min_ms); }

/// The operands of one layer and reference values at the checked points; the
/// runner writes them to a file every candidate's driver reads.
struct ProblemData {
  Shape shape;
  AlignedFloats input;         // [N][H][W][C], NHWC, not padded; on a cache line (core/aligned.h)
  std::vector<float> weights;  // [K][C/groups][R][S], as ONNX and PyTorch store them
  Epilogue epilogue = Epilogue::none;  // the kernels' fused epilogue (reference.h ct_ref_epilogue)
  std::vector<float> bias;      // [K] with an epilogue, else empty
  AlignedFloats residual;       // [N][Ho][Wo][K] for bias,add, else empty
  std::vector<int64_t> check_index;  // output elements checked
  std::vector<double> check_value;   // their reference values, epilogue applied
  double tolerance = 0;              // absolute, scaled to the reduction length

  /// Random operands in [-1, 1] from `seed`; `points` output elements checked
  /// (0 = every element of the output). With an epilogue, a bias in [-8, 8)
  /// and a residual in [-4, 4), so that ReLU and ReLU6 clamp at both ends.
  static ProblemData make(const Shape& s, size_t points, uint64_t seed, Epilogue epilogue = Epilogue::none);
  /// Output [N][Ho][Wo][K] (NHWC), exactly K wide.
  size_t output_size() const { return size_t(shape.N * shape.Ho() * shape.Wo() * shape.K); }
};

/// One output element of the reference convolution, in double, with the
/// problem's epilogue applied (microkernels/reference.c ct_ref_epilogue).
double reference_point(const ProblemData& p, int64_t index);

struct RunResult {
  Status status = Status::crash;  // ok | wrong_result | crash | timeout | load_error; compile_error: build_and_run_conv
  std::string detail;            // why, for anything but ok
  double seconds = 0;            // median time per call; with a clock probe, at the reference speed
  std::vector<double> samples;   // kept measurements, seconds per call (likewise)
  double wall_seconds = 0;       // median wall-clock time per call, as measured
  std::vector<double> probe_s;   // the clock probe's seconds beside each sample (empty: no probe)
  std::vector<double> probe_gflops;  // the same as the probe's speed (Runner::run_conv fills it)
  std::vector<long long> counters;
  std::string counter_names;     // "none: ..." when absent
};

/// A convolution driver's output (its JSON lines, or whatever else it printed)
/// and exit as a result: the first line with a "status" decides; without one,
/// a crash or timeout whose detail says how it ended and the last other text.
RunResult conv_result(const ProcResult& p, double timeout_s);

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

/// One microkernel's measurement in a profile unit.
struct UkMeasured {
  Status status = Status::crash;  // ok | wrong_result | crash | timeout (compile_error: profile_stages.cpp)
  double gflops = 0;
  std::vector<long long> counters;  // per call (natively, where the machine has them)
};

class Runner {
 public:
  /// Builds the driver in `dir` with $CC (native) or the cross compiler
  /// (emulated: throws Error naming the packages when emulation_missing).
  /// Executables pin themselves to `cpu` (< 0: not pinned); with threads > 1
  /// to the `threads` CPUs of measuring_cpus(cpu, threads), one OpenMP thread
  /// on each (driver.c). Throws Error when the compiler does not work or
  /// there are not that many CPUs.
  Runner(const Isa& isa, bool emulated, int cpu, const std::string& dir, int threads = 1);

  bool emulated() const { return emulated_; }
  const std::string& emulator() const { return isa_.emulation.qemu; }
  CompilerInfo compiler_info() const { return cc_.info(); }
  /// The flags that use this run's precompiled intrinsics header, none when
  /// there is none (yet: build() makes it; compiler.h
  /// precompiled_header_flags): for other compiles of the same ISA in the
  /// same work directory.
  const std::vector<std::string>& pch_flags() const { return pch_flags_; }

  /// Links each job's C file with the driver into the job's executable;
  /// conv_symbol names a convolution's function ("" for units and the peak),
  /// whose signature has bias and residual when it has an epilogue.
  std::vector<CompileResult> build(const std::vector<CompileJob>& jobs, int parallel,
                                   const std::string& conv_symbol = "",
                                   const std::function<void(size_t)>& on_done = {},
                                   Epilogue epilogue = Epilogue::none) const;

  /// Writes the operands and reference values that run_conv checks against.
  void set_problem(const ProblemData& p);
  /// Verifies a built convolution at the problem's check points, then times
  /// it; killed when verifying or a measurement takes longer than timeout_s.
  /// Natively, once peak_gflops() has run, every sample comes with the clock
  /// probe (the peak loop, timing.h) and the result's seconds are those at the
  /// first measured peak (measure.h at_reference): kernels timed at different
  /// moments then rank by their speed, not by the VM's.
  RunResult run_conv(const std::string& exe, const TimingProtocol& protocol, double timeout_s) const;

  /// For i in todo, checks ct_profile_fns[i - base] of a built unit against
  /// the contract's reference (nc_verify steps, overwrite on NaN garbage,
  /// then accumulate) and times nc_time steps; done(i, result). A crash or
  /// hang loses only the microkernel in flight.
  void measure_unit(const std::string& exe, const std::vector<UkCase>& cases, size_t base,
                    const std::vector<size_t>& todo, int64_t nc_verify, int64_t nc_time,
                    const TimingProtocol& protocol,
                    const std::function<void(size_t, const UkMeasured&)>& done) const;

  /// The peak loop (peak.h), linked into every executable: its median
  /// GFLOP/s on one core (the highest CPU of the set); the first becomes the
  /// reference of run_conv's clock probe. Throws Error when it does not run.
  /// One measurement lasts at least min_ms (the median of 5): tune and bench
  /// pass peak_min_ms(their --min-repeat-ms), the profile the default.
  double peak_gflops(double min_ms = kPeakMinMs);
  /// The first peak_gflops() result (0 before it).
  double reference_gflops() const { return reference_gflops_; }
  /// The CPUs executables pin themselves to (empty: not pinned).
  const std::vector<int>& cpus() const { return cpus_; }

 private:
  std::vector<std::string> command(const std::string& exe, bool one_cpu = false) const;  // [qemu] exe cpus

  Isa isa_;
  bool emulated_;
  std::vector<int> cpus_;
  std::string dir_;
  Compiler cc_;  // link_flags add the driver
  mutable std::vector<std::string> pch_flags_;
  mutable bool pch_tried_ = false;
  mutable size_t files_built_ = 0;
  std::string peak_exe_, data_file_;
  double reference_gflops_ = 0;
};

/// Builds one generated convolution (C file defining `symbol`, compiled with
/// `cflags` too: GeneratedKernel::cflags) with the driver and runs it once on
/// measuring_cpus(cpu, threads): the one-shot path of tests and tools. The
/// function has p.epilogue's signature.
RunResult build_and_run_conv(const Isa& isa, bool emulated, const ProblemData& p, const std::string& c_file,
                             const std::string& symbol, int cpu, const TimingProtocol& protocol, double timeout_s,
                             const std::vector<std::string>& cflags = {}, int threads = 1);

}  // namespace convtune
