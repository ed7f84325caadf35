// `convtune bench --processes P`: the comparison in P fresh processes, one
// after another, each `convtune bench --config` of the same kernel on the same
// CPUs. Within a process the interleaved rounds cancel the clock's drift, but
// every round reuses the process's buffers, so their physical pages (and the
// L2 sets these map to) are drawn once per process, for convtune and oneDNN
// independently. Fresh processes draw them again.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convtune/bench/bench.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/error.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/subprocess.h"
#include "report_text.h"

namespace convtune {

namespace {

// One process's result (its --json object, read back), or an Error naming the process and its first line.
BenchResult one_process(const std::vector<std::string>& argv, int i, int n, const std::string& layer) {
  const ProcResult p = run_command(argv, 86400);
  const size_t start = p.output.rfind("\n{");
  const std::string json = start == std::string::npos ? p.output : p.output.substr(start + 1);
  std::string why = p.output.substr(0, p.output.find('\n'));
  if (p.ok() && !json.empty() && json[0] == '{') {
    try {
      return bench_from_json(json);
    } catch (const Error& e) {
      why = e.what();
    }
  }
  if (why.rfind("convtune: error: ", 0) == 0) why = why.substr(17);
  throw Error(fmt::format("bench {}: process {} of {} failed ({}): {}", layer, i + 1, n,
                          p.ok() ? "no result" : failure_text(p, 86400), why));
}

}  // namespace

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
  std::vector<BenchResult> runs;
  for (int i = 0; i < opt.processes; ++i) {
    bench_note(t.quiet, fmt::format("bench {}: process {} of {}", res.layer, i + 1, opt.processes));
    runs.push_back(one_process(argv, i, opt.processes, res.layer));
  }
  std::vector<double> peaks;
  for (const BenchResult& r : runs) {
    peaks.push_back(r.peak_gflops);
    if (const double q = bench_ratio(r)) res.process_ratios.push_back(q);
  }
  res.peak_gflops = median(peaks);
  res.machine = runs[0].machine;
  res.date = runs[0].date;
  for (const BenchEntry& first : runs[0].entries) {
    // Every process's samples; the median of their medians; missing if one process lacked it.
    BenchEntry m(first.name);
    std::vector<double> seconds, wall;
    for (const BenchResult& r : runs) {
      const BenchEntry* e = r.find(first.name);
      if (!e || !e->ran()) {
        m.missing = e ? e->missing : "not in every process's result";
        break;
      }
      m.impl = e->impl;
      seconds.push_back(e->seconds);
      wall.push_back(e->wall_seconds);
      m.max_error = std::max(m.max_error, e->max_error);
      m.samples.insert(m.samples.end(), e->samples.begin(), e->samples.end());
      m.probe_gflops.insert(m.probe_gflops.end(), e->probe_gflops.begin(), e->probe_gflops.end());
    }
    if (m.ran()) {
      m.seconds = median(seconds);
      m.wall_seconds = median(wall);
    }
    res.entries.push_back(m);
  }
  return res;
}

}  // namespace convtune
