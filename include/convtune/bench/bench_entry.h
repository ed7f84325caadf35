#pragma once
// One implementation's measurement in a bench table (bench.h, library_bench.h),
// filled in by the interleaved timing loop (interleaved.h).
#include <string>
#include <utility>
#include <vector>

namespace convtune {

struct BenchEntry {
  explicit BenchEntry(std::string name_ = "", std::string impl_ = "", std::string missing_ = "")
      : name(std::move(name_)), impl(std::move(impl_)), missing(std::move(missing_)) {}
  std::string name;         // "convtune", "oneDNN", "im2col+OpenBLAS"
  std::string impl;         // what ran: config, oneDNN implementation, OpenBLAS core
  std::string missing;      // not run: why, and how to get it
  double seconds = 0;       // median per call, at the peak's speed (the clock probe, measure.h at_reference)
  std::vector<double> samples;
  double max_error = 0;     // against the reference, at the checked points
  double wall_seconds = 0;  // median wall-clock time per call, as measured
  std::vector<double> probe_gflops;  // the clock probe's speed beside each sample
  bool ran() const { return missing.empty(); }
};

}  // namespace convtune
