#pragma once
// The timing protocol shared by the profiler and the tuner (000 §5, TVM's
// evaluator): warm up, calibrate a call count that lasts at least min_ms,
// discard the first measurement, keep `repeat`, report the median. The one
// implementation is microkernels/timing.c, which generated code's driver runs;
// time_calls is its C++ face for what convtune times in-process (bench).
#include <cstdint>
#include <functional>
#include <vector>

namespace convtune {

struct TimingProtocol {
  double min_ms = 100;  // one measurement lasts at least this long
  int repeat = 5;       // measurements kept
  int discard = 1;      // measurements thrown away first
};

struct Timing {
  double median_s = 0;                // per call
  std::vector<double> samples_s;      // per call, kept measurements
  int64_t calls_per_sample = 0;
  std::vector<long long> counters;    // summed over kept samples (may be empty)
};

/// Times call() under the protocol; `counters` (names in order) are read
/// around each kept measurement when non-null.
class Counters;
Timing time_calls(const std::function<void()>& call, const TimingProtocol& p,
                  Counters* counters = nullptr);

double median(std::vector<double> v);

}  // namespace convtune
