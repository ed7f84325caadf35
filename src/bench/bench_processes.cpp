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
#include <nlohmann/json.hpp>

#include "convtune/bench/bench.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/error.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/subprocess.h"
#include "report_text.h"

namespace convtune {

namespace {

// One process's --json object, or an Error naming the process and its first line.
nlohmann::json one_process(const std::vector<std::string>& argv, int i, int n, const std::string& layer) {
  const ProcResult p = run_command(argv, 86400);
  const size_t start = p.output.rfind("\n{");
  const std::string json = start == std::string::npos ? p.output : p.output.substr(start + 1);
  if (p.ok() && !json.empty() && json[0] == '{') {
    nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
    if (!j.is_discarded()) return j;
  }
  std::string why = p.output.substr(0, p.output.find('\n'));
  if (why.rfind("convtune: error: ", 0) == 0) why = why.substr(17);
  throw Error(fmt::format("bench {}: process {} of {} failed ({}): {}", layer, i + 1, n,
                          p.ok() ? "no result" : failure_text(p, 86400), why));
}

// The entries of one process's object, in the order bench reports them.
BenchEntry entry_of(const nlohmann::json& j, const std::string& name) {
  BenchEntry e(name);
  const nlohmann::json& x = j.at(bench_json_key(name));
  if (x.contains("missing")) {
    e.missing = x["missing"].get<std::string>();
    return e;
  }
  e.impl = x["impl"].get<std::string>();
  e.seconds = x["seconds"].get<double>();
  e.samples = x["samples"].get<std::vector<double>>();
  e.wall_seconds = x["wall_seconds"].get<double>();
  e.probe_gflops = x["probe_gflops"].get<std::vector<double>>();
  e.max_error = x["max_error"].get<double>();
  return e;
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
  std::vector<nlohmann::json> runs;
  for (int i = 0; i < opt.processes; ++i) {
    bench_note(t.quiet, fmt::format("bench {}: process {} of {}", res.layer, i + 1, opt.processes));
    runs.push_back(one_process(argv, i, opt.processes, res.layer));
  }
  std::vector<double> peaks;
  for (const auto& j : runs) {
    peaks.push_back(j["peak_gflops"].get<double>());
    if (!j["ratio_convtune_onednn"].is_null()) res.process_ratios.push_back(j["ratio_convtune_onednn"].get<double>());
  }
  res.peak_gflops = median(peaks);
  res.machine = runs[0]["machine"].get<std::string>();
  res.date = runs[0]["date"].get<std::string>();
  for (const char* name : {"convtune", "oneDNN", "im2col+OpenBLAS", "XNNPACK", "LIBXSMM"}) {
    // Every process's samples; the median of their medians; missing if one process lacked it.
    BenchEntry m(name);
    std::vector<double> seconds, wall;
    for (const auto& j : runs) {
      const BenchEntry e = entry_of(j, name);
      if (!e.ran()) {
        m.missing = e.missing;
        break;
      }
      m.impl = e.impl;
      seconds.push_back(e.seconds);
      wall.push_back(e.wall_seconds);
      m.max_error = std::max(m.max_error, e.max_error);
      m.samples.insert(m.samples.end(), e.samples.begin(), e.samples.end());
      m.probe_gflops.insert(m.probe_gflops.end(), e.probe_gflops.begin(), e.probe_gflops.end());
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
