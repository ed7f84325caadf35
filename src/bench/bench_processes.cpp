// `convtune bench --processes P`: the comparison in P fresh processes, one
// after another, each `convtune bench --config` of the same kernel on the same
// CPUs. Within a process the interleaved rounds cancel the clock's drift, but
// every round reuses the process's buffers, so their physical pages (and the
// L2 sets these map to) are drawn once per process, for convtune and oneDNN
// independently. Fresh processes draw them again.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convtune/bench/bench.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/error.h"
#include "convtune/execution/measure.h"
#include "processes.h"
#include "report_text.h"

namespace convtune {

BenchResult run_bench_processes(const BenchOptions& opt) {
  const TuneOptions& t = opt.tune;
  Isa isa;
  BenchResult res = bench_kernel(opt, &isa);
  res.processes = opt.processes;
  const std::vector<std::string> argv{"/proc/self/exe",
                                      "bench",
                                      "--shape",
                                      t.shape.to_string(),
                                      "--config",
                                      res.best.config,
                                      "--arch",
                                      isa.name,
                                      "--cpu",
                                      std::to_string(res.cpu),
                                      "--threads",
                                      std::to_string(res.threads),
                                      "--epilogue",
                                      to_string(t.epilogue),
                                      "--min-repeat-ms",
                                      fmt::format("{}", t.min_repeat_ms),
                                      "--repeat",
                                      std::to_string(t.repeat),
                                      "--check-points",
                                      std::to_string(t.check_points),
                                      "--json",
                                      "--quiet"};
  const std::vector<BenchResult> runs =
      run_processes<BenchResult>(argv, opt.processes, "bench " + res.layer, t.quiet, bench_from_json);
  std::vector<double> peaks;
  for (const BenchResult& r : runs) {
    peaks.push_back(r.peak_gflops);
    if (const double q = bench_ratio(r)) res.process_ratios.push_back(q);
  }
  res.peak_gflops = median(peaks);
  res.machine = runs[0].machine;
  res.date = runs[0].date;
  for (const BenchEntry& first : runs[0].entries) {
    std::vector<const BenchEntry*> per_process;
    for (const BenchResult& r : runs) per_process.push_back(r.find(first.name));
    res.entries.push_back(median_entry(first.name, per_process));
  }
  return res;
}

}  // namespace convtune
