#pragma once
// The closing comparison of `convtune tune`: oneDNN on the same shape, timed
// under the same protocol in a child pinned to the measuring core. The child
// is convtune itself (/proc/self/exe internal-onednn ...), spawned, so the
// tuner neither forks nor pins itself nor starts OpenMP.
#include <string>

#include <nlohmann/json.hpp>

#include "convtune/tune/tune.h"

namespace convtune {

struct OnednnComparison {
  bool available = false;  // oneDNN is in this build
  std::string error;       // it ran but failed (shape rejected, wrong output, ...)
  std::string impl;        // e.g. brgconv:avx512_core
  double seconds = 0;
  double gflops = 0;
  double ratio = 0;        // convtune's GFLOP/s over oneDNN's
};

/// Times oneDNN for r.shape and r.epilogue (as post-ops, baseline.h) with o's
/// cores (--cpu, --threads) and timing; never throws.
OnednnComparison compare_onednn(const TuneResult& r, const TuneOptions& o);

/// compare_onednn before there is a best: oneDNN timed for r.shape,
/// r.epilogue at r.peak_gflops (the budget scheduler times each layer's
/// oneDNN once, at the start); ratio left 0. Never throws.
OnednnComparison time_onednn(const TuneResult& r, const TuneOptions& o);
/// c.ratio from r's best (0 without one).
void set_onednn_ratio(OnednnComparison& c, const TuneResult& r);

/// The child's side (`convtune internal-onednn`): pins itself to the
/// `threads` CPUs of measuring_cpus(cpu, threads), runs oneDNN on that many OpenMP threads,
/// checks it against the reference, times it and prints one JSON line,
/// {"status":"ok","median_s":..,"impl":".."} or {"status":"error","detail":".."}.
/// With reference_gflops > 0 it times with `isa`'s clock probe, and median_s
/// is at that speed, as the tune's candidates (runner.h run_conv).
/// Returns the exit code.
int onednn_child(const Shape& shape, int cpu, double min_ms, int repeat, int threads = 1,
                 Epilogue epilogue = Epilogue::none, const std::string& isa = "", double reference_gflops = 0);

/// One line for tune's summary ("" when oneDNN is not in this build).
std::string onednn_text(const OnednnComparison& c, double peak_gflops);
/// {gflops, impl, ratio, seconds}, {error} or null.
nlohmann::json onednn_json(const OnednnComparison& c);

}  // namespace convtune
