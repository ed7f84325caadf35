#pragma once
// The timing protocol shared by the profiler and the tuner (000 §5, TVM's
// evaluator): warm up, calibrate a call count that lasts at least min_ms,
// discard the first measurement, keep `repeat`, report the median. The one
// implementation is microkernels/timing.c, which generated code's driver runs;
// time_calls is its C++ face for what convtune times in-process (bench).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace convtune {

struct TimingProtocol {
  TimingProtocol(double min_ms_ = 100, int repeat_ = 5, int discard_ = 1, std::function<void()> probe_ = {})
      : min_ms(min_ms_), repeat(repeat_), discard(discard_), probe(std::move(probe_)) {}
  double min_ms;                // one measurement lasts at least this long
  int repeat;                   // measurements kept
  int discard;                  // measurements thrown away first
  std::function<void()> probe;  // the clock probe (timing.h ct_protocol), or empty
  int64_t calls = 0;            // calls per measurement from an earlier calibration (0: calibrate)
};

struct Timing {
  double median_s = 0;                // per call
  std::vector<double> samples_s;      // per call, kept measurements
  std::vector<double> probe_s;        // per probe, beside each kept measurement (empty: no probe)
  int64_t calls_per_sample = 0;
  std::vector<long long> counters;    // summed over kept samples (may be empty)
};

/// Times call() under the protocol; `counters` (names in order) are read
/// around each kept measurement when non-null.
class Counters;
Timing time_calls(const std::function<void()>& call, const TimingProtocol& p,
                  Counters* counters = nullptr);

double median(std::vector<double> v);

/// The q-quantile (0..1) of v, interpolated linearly between neighbours; v
/// not empty. median(v) is quantile(v, 0.5).
double quantile(std::vector<double> v, double q);

/// The order in which n interleaved implementations run in round `round`:
/// the rotation by round / 2, reversed in odd rounds (0 1, 1 0, 1 0, 0 1 for
/// two). Each runs in every position, and after each of its two neighbours
/// in the list, not only after the one before it as in a plain rotation: a
/// kernel leaves caches, TLB and prefetchers in its own state, and oneDNN,
/// always run after convtune, can read shares of the peak a fifth apart on
/// one layer depending on which convtune kernel ran before it.
std::vector<size_t> round_order(size_t n, size_t round);

/// Wall-clock samples brought to the speed `reference_gflops`: each one times
/// the probe's speed beside it over the reference. The same kernel timed at
/// two speeds of the VM gives the same figure; its GFLOP/s over the reference
/// is its fraction of the momentary peak.
std::vector<double> at_reference(const std::vector<double>& wall_s, const std::vector<double>& probe_gflops,
                                 double reference_gflops);

/// The time to keep for one run: the probe-scaled one, unless it puts the
/// real multiply-adds more than 3 % above the peak loop, which no kernel can
/// do. Then something (another process, the hypervisor) slowed the probe and
/// not the kernel alike, and the scaling shrank the time: the wall-clock time
/// stands. Otherwise a probe slowed to two thirds of the peak makes a kernel
/// that runs at 78 % read well above 100 %, in the search and in every
/// re-measure round, and win.
double trusted_seconds(double scaled_s, double wall_s, double real_flops, double peak_gflops);

}  // namespace convtune
