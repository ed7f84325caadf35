#include "convtune/tune/tune_compare.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "convtune/baselines/baseline.h"
#include "convtune/execution/output_check.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/json_lines.h"
#include "convtune/core/machine.h"
#include "convtune/execution/clock_probe.h"
#include "convtune/execution/subprocess.h"

namespace convtune {

int onednn_child(const Shape& shape, int cpu, double min_ms, int repeat, int threads, Epilogue epilogue,
                 const std::string& isa, double reference_gflops) {
  nlohmann::json j;
  try {
    bind_openmp_threads(measuring_cpus(cpu, threads));  // oneDNN's OpenMP threads one per CPU, as the driver's
    ProblemData p = ProblemData::make(shape, 1000, 20221101, epilogue);
    std::string missing;
    auto dn = make_onednn(p, &missing, threads);
    if (!dn) throw Error(missing.empty() ? "oneDNN is not in this build" : missing);
    dn->run();
    std::string err = check_output(p, dn->output(), "oneDNN", "check the libdnnl installation");
    if (!err.empty()) throw Error(err);
    std::unique_ptr<ClockProbe> probe;
    if (reference_gflops > 0) probe = std::make_unique<ClockProbe>(load_isa(isa), reference_gflops);
    Timing t = time_calls([&] { dn->run(); }, TimingProtocol{min_ms, repeat, 1, probe ? probe->call() : nullptr});
    const double seconds = probe ? median(probe->at_reference(t, nullptr)) : t.median_s;
    j = {{"status", "ok"}, {"median_s", seconds}, {"impl", dn->impl()}};
  } catch (const std::exception& e) {
    j = {{"status", "error"}, {"detail", e.what()}};
  }
  print_json_line(j);
  return 0;
}

OnednnComparison compare_onednn(const TuneResult& r, const TuneOptions& o) {
  OnednnComparison c;
  c.available = onednn_missing().empty();
  if (!c.available || !r.has_best) return c;
  c = time_onednn(r, o);
  set_onednn_ratio(c, r);
  return c;
}

void set_onednn_ratio(OnednnComparison& c, const TuneResult& r) {
  c.ratio = c.gflops > 0 && r.has_best ? r.best.gflops / c.gflops : 0;
}

OnednnComparison time_onednn(const TuneResult& r, const TuneOptions& o) {
  OnednnComparison c;
  c.available = onednn_missing().empty();
  if (!c.available) return c;
  const int cpu = o.cpu >= 0 ? o.cpu : default_cpu();
  const double limit = std::max(120.0, o.timeout_s);
  ProcResult pr = run_lines({"/proc/self/exe", "internal-onednn", "--shape", r.shape.to_string(),
                             "--cpu", std::to_string(cpu), "--min-repeat-ms", fmt::format("{}", o.min_repeat_ms),
                             "--repeat", std::to_string(o.repeat), "--threads", std::to_string(o.threads),
                             "--epilogue", to_string(r.epilogue), "--arch", o.isa, "--reference-gflops",
                             fmt::format("{}", r.emulated ? 0.0 : r.peak_gflops / o.threads)},
                            limit);
  std::string last;
  for (const auto& line : pr.lines) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("status")) {
      last = line;
      continue;
    }
    if (j.value("status", "") == "ok" && j.value("median_s", 0.0) > 0) {
      c.seconds = j["median_s"].get<double>();
      c.impl = j.value("impl", "");
      c.gflops = r.shape.flops() / c.seconds * 1e-9;
    } else {
      c.error = j.value("detail", line);
    }
    return c;
  }
  c.error = pr.timed_out ? "oneDNN timed out"
                         : "the oneDNN child " + failure_text(pr, limit) + " before reporting" +
                               (last.empty() ? "" : ": " + last.substr(0, 300));
  return c;
}

std::string onednn_text(const OnednnComparison& c, double peak_gflops) {
  if (!c.available) return "";
  if (!c.error.empty()) return "oneDNN: not compared: " + c.error + "\n";
  return fmt::format("oneDNN: {:.1f} GFLOP/s = {:.1f}% of peak ({:.3f} ms, {}); convtune/oneDNN = {:.2f}\n", c.gflops,
                     100 * c.gflops / peak_gflops, c.seconds * 1e3, c.impl, c.ratio);
}

nlohmann::json onednn_json(const OnednnComparison& c) {
  if (!c.available) return nullptr;
  if (!c.error.empty()) return {{"error", c.error}};
  return {{"gflops", c.gflops}, {"impl", c.impl}, {"ratio", c.ratio}, {"seconds", c.seconds}};
}

}  // namespace convtune
