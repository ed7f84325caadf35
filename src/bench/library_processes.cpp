// `convtune bench --library DIR --processes P`: the whole comparison in P
// fresh processes, one after another, each `convtune bench --library` of the
// same selection on the same CPUs, merged as bench --processes merges its own
// (processes.h). A layer's time alone moves between processes by far more than
// within one (docs/bench.md), so one process's per-layer ratios can mislead;
// their median does not.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convtune/bench/library_bench.h"
#include "convtune/core/error.h"
#include "processes.h"
#include "report_text.h"

namespace convtune {

namespace {

std::vector<std::string> child_argv(const LibraryBenchOptions& opt) {
  std::vector<std::string> argv{"/proc/self/exe", "bench", "--library", opt.dir};
  argv.insert(argv.end(), opt.selection.begin(), opt.selection.end());
  if (opt.cpu >= 0) argv.insert(argv.end(), {"--cpu", std::to_string(opt.cpu)});
  argv.insert(argv.end(), {"--threads", std::to_string(opt.threads), "--min-repeat-ms",
                           fmt::format("{}", opt.min_repeat_ms), "--repeat", std::to_string(opt.repeat),
                           "--check-points", std::to_string(opt.check_points), "--json", "--quiet"});
  return argv;
}

std::vector<const BenchEntry*> entries_of(const std::vector<LibraryBenchResult>& runs, size_t layer,
                                          const std::string& name) {
  std::vector<const BenchEntry*> e;
  for (const LibraryBenchResult& r : runs)
    e.push_back(layer < r.layers.size() ? r.layers[layer].find(name) : r.total(name));
  return e;
}

}  // namespace

LibraryBenchResult run_library_bench_processes(const LibraryBenchOptions& opt) {
  if (opt.selection.empty()) throw Error("bench --library --processes needs the selection's options to pass on");
  const std::vector<std::string> argv = child_argv(opt);
  const std::string what = "bench --library " + opt.dir;
  const std::vector<LibraryBenchResult> runs =
      run_processes<LibraryBenchResult>(argv, opt.processes, what, opt.quiet, library_bench_from_json);
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].layers.size() != runs[0].layers.size())  // the same selection each time
      throw Error(fmt::format("{}: process {} of {} benched another selection", what, i + 1, opt.processes));
  LibraryBenchResult res = runs[0];
  res.processes = opt.processes;
  const size_t total = res.layers.size();  // entries_of's index of the sequence's totals
  for (size_t i = 0; i <= total; ++i) {
    std::vector<BenchEntry>& merged = i < total ? res.layers[i].entries : res.totals;
    std::vector<double>& ratios = i < total ? res.layers[i].process_ratios : res.process_ratios;
    for (BenchEntry& e : merged) e = median_entry(e.name, entries_of(runs, i, e.name));
    const std::vector<const BenchEntry*> lib = entries_of(runs, i, "library"), dn = entries_of(runs, i, "oneDNN");
    for (size_t p = 0; p < runs.size(); ++p)
      if (const double q = speed_ratio(lib[p], dn[p])) ratios.push_back(q);
  }
  return res;
}

}  // namespace convtune
