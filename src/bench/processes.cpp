// What bench --processes and bench --library --processes share (processes.h).
#include "processes.h"

#include <algorithm>

#include "convtune/execution/measure.h"
#include "convtune/execution/subprocess.h"

namespace convtune {

std::string process_json(const std::vector<std::string>& argv, int i, int n, const std::string& what) {
  const ProcResult p = run_command(argv, 86400);
  const size_t start = p.output.rfind("\n{");
  const std::string json = start == std::string::npos ? p.output : p.output.substr(start + 1);
  std::string why = p.output.substr(0, p.output.find('\n'));
  if (p.ok() && !json.empty() && json[0] == '{') return json;
  if (why.rfind("convtune: error: ", 0) == 0) why = why.substr(17);
  throw Error(fmt::format("{}: process {} of {} failed ({}): {}", what, i + 1, n,
                          p.ok() ? "no result" : failure_text(p, 86400), why));
}

BenchEntry median_entry(const std::string& name, const std::vector<const BenchEntry*>& per_process) {
  BenchEntry m(name);
  std::vector<double> seconds, wall;
  for (const BenchEntry* e : per_process) {
    if (!e || !e->ran()) {
      m.missing = e ? e->missing : "not in every process's result";
      return m;
    }
    m.impl = e->impl;
    seconds.push_back(e->seconds);
    wall.push_back(e->wall_seconds);
    m.max_error = std::max(m.max_error, e->max_error);
    m.samples.insert(m.samples.end(), e->samples.begin(), e->samples.end());
    m.probe_gflops.insert(m.probe_gflops.end(), e->probe_gflops.begin(), e->probe_gflops.end());
  }
  m.seconds = median(seconds);
  m.wall_seconds = median(wall);
  return m;
}

}  // namespace convtune
