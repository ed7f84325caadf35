#pragma once
// What bench --processes and bench --library --processes share: one fresh
// `convtune ... --json` process run and its last JSON line taken, and one
// implementation's entries of several processes merged into one.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convtune/bench/bench_entry.h"
#include "convtune/core/error.h"
#include "report_text.h"

namespace convtune {

/// Runs argv (a `convtune ... --json` command) as process i of n and returns
/// its last line that opens a JSON object. Throws Error naming `what`, the
/// process and its first line when it fails or prints no object.
std::string process_json(const std::vector<std::string>& argv, int i, int n, const std::string& what);

/// argv in n processes one after another, each announced unless `quiet`,
/// each one's JSON read by `parse` (which throws Error for what it cannot
/// read); an Error names `what` and the process.
template <class Result, class Parse>
std::vector<Result> run_processes(const std::vector<std::string>& argv, int n, const std::string& what, bool quiet,
                                  Parse parse) {
  std::vector<Result> runs;
  for (int i = 0; i < n; ++i) {
    bench_note(quiet, fmt::format("{}: process {} of {}", what, i + 1, n));
    const std::string json = process_json(argv, i, n, what);
    try {
      runs.push_back(parse(json));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: process {} of {} failed (no result): {}", what, i + 1, n, e.what()));
    }
  }
  return runs;
}

/// One implementation over the processes: the median of their medians (time
/// and wall time), every sample and probe reading, the largest error; missing
/// (with the first reason) unless it ran in every process. A null entry is a
/// process whose result lacked it.
BenchEntry median_entry(const std::string& name, const std::vector<const BenchEntry*>& per_process);

}  // namespace convtune
