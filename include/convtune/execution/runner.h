#pragma once
// Runs one compiled candidate in its own process: loads it, checks it against
// a reference convolution, times it under the protocol (000 §5). A crash,
// hang or wrong result is a status, never the tuner's death.
#include <cstdint>
#include <string>
#include <vector>

#include "convtune/execution/measure.h"
#include "convtune/core/shape.h"

namespace convtune {

/// The operands of one layer, made once and inherited by every forked child.
struct ProblemData {
  Shape shape;
  int64_t Kp = 0;
  std::vector<float> input;    // [N][Hp][Wp][C], zero padding included
  std::vector<float> weights;  // [R][S][C][Kp], columns K..Kp-1 zero
  std::vector<int64_t> check_index;  // output elements checked
  std::vector<double> check_value;   // their reference values
  double tolerance = 0;              // absolute, scaled to the reduction length

  /// Random operands in [-1, 1] from `seed`; `points` output elements checked
  /// (0 = every element of the output).
  static ProblemData make(const Shape& s, int64_t lanes, size_t points, uint64_t seed);
  size_t output_size() const { return size_t(shape.N * shape.Ho() * shape.Wo() * Kp); }
};

/// One output element of the reference convolution, in double.
double reference_point(const ProblemData& p, int64_t index);

struct RunResult {
  std::string status = "crash";  // ok | wrong_result | crash | timeout | load_error
  std::string detail;            // why, for anything but ok
  double seconds = 0;            // median time per call
  std::vector<double> samples;   // kept measurements, seconds per call
  std::vector<long long> counters;
  std::string counter_names;     // "none: ..." when absent
};

/// Reads one line of a candidate's report ("ok <median> samples ... [counters
/// N ... names ...]", "wrong_result <why>", "load_error <why>") into r; false
/// for any other line. The native and the emulated runner share it.
bool parse_result_line(const std::string& line, RunResult* r);

/// Runs `symbol` from `so_path` in a child pinned to `cpu`. The child is
/// killed when a call (or the verification) takes longer than timeout_s.
RunResult run_candidate(const ProblemData& p, const std::string& so_path, const std::string& symbol,
                        int cpu, const TimingProtocol& protocol, double timeout_s);

}  // namespace convtune
