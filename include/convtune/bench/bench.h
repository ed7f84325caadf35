#pragma once
// `convtune bench`: convtune's best kernel for a layer against oneDNN and
// im2col + OpenBLAS, in one process pinned to --threads cores (one by
// default), each library on that many threads, under the tuner's timing
// protocol, after checking that all compute the same convolution.
// `bench --threads 1,2` runs once per count in one process (bench_scaling).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convtune/tune/records.h"
#include "convtune/bench/bench_entry.h"
#include "convtune/execution/output_check.h"
#include "convtune/execution/runner.h"
#include "convtune/tune/tune.h"

namespace convtune {

struct BenchOptions {
  TuneOptions tune;         // shape, isa, cpu, threads, timing, check points, out/log (as for tune)
  bool fresh_tune = false;  // tune first (tune.trials candidates) instead of reading the log
  std::string config;       // --config: bench this configuration's kernel instead (no log, no tune)
  int processes = 1;        // --processes: fresh processes, each a whole interleaved measurement (bench_processes.cpp)
};

struct BenchResult {
  std::string layer;
  Shape shape;
  Epilogue epilogue = Epilogue::none;  // every implementation applies it (baseline.h)
  int cpu = 0;
  int threads = 1;          // every implementation's thread count
  std::vector<int> cpus;    // the process was pinned to these
  double peak_gflops = 0;   // one core's times threads
  std::string log_path;
  int64_t trials = 0;       // candidates in the log
  Record best;              // convtune's kernel as the log recorded it
  bool config_given = false;  // best.config came from --config (no log: log_path empty, trials 0)
  std::string date;         // UTC, ISO 8601
  std::string machine;      // CPU model
  std::vector<BenchEntry> entries;  // convtune, oneDNN, im2col+OpenBLAS
  int processes = 1;        // measured in this many fresh processes (bench --processes)
  std::vector<double> process_ratios;  // convtune/oneDNN in each of them (processes > 1)
  const BenchEntry* find(const std::string& name) const;
};

/// Runs the comparison for opt.tune.shape. Throws Error for bad input, a
/// missing log, or an implementation that disagrees with the reference.
BenchResult run_bench(const BenchOptions& opt);

/// The comparison's setup without the timing: the layer, the CPUs, and
/// convtune's kernel (from --config, a fresh tune or the log) in res.best.
BenchResult bench_kernel(const BenchOptions& opt, Isa* isa);

/// run_bench in opt.processes fresh processes (`convtune bench --config` of
/// the kernel bench_kernel chose, one after another). A process's buffers,
/// and so their physical pages and cache sets, are its own: one layer's
/// ratio can differ by several % from one process to another.
/// Every time is the median of the processes' medians; process_ratios keeps
/// each one's convtune/oneDNN, and bench_ratio is their median.
BenchResult run_bench_processes(const BenchOptions& opt);

/// Human table and the --json object.
std::string bench_summary(const BenchResult& r);
std::string bench_json(const BenchResult& r);
/// bench_json's object read back (what bench --processes merges); the
/// entries in bench's order. Throws Error if `text` is not such an object.
BenchResult bench_from_json(const std::string& text);
/// convtune/oneDNN: oneDNN's time over convtune's; 0 when either did not run.
/// Of several processes, the median of their own ratios (process_ratios).
double bench_ratio(const BenchResult& r);
/// oneDNN's (median) time over convtune's; 0 when either did not run.
double ratio_of_medians(const BenchResult& r);
/// `bench --threads 1,2`: one line per thread count of one layer with
/// convtune's and oneDNN's times, GFLOP/s, speed-up over the first count and
/// convtune/oneDNN.
std::string bench_scaling(const std::vector<BenchResult>& runs);

}  // namespace convtune
