#include "convtune/online/tune_compare.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "convtune/baselines/baseline.h"
#include "convtune/bench/bench.h"
#include "convtune/core/error.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine.h"
#include "convtune/execution/subprocess.h"

namespace convtune {

OnednnComparison compare_onednn(const TuneResult& r, const TuneOptions& o) {
  OnednnComparison c;
  c.available = onednn_missing().empty();
  if (!c.available || !r.has_best) return c;
  const int cpu = o.cpu >= 0 ? o.cpu : default_cpu();
  // A child, so the tuner itself stays unpinned and never starts OpenMP.
  ForkResult fr = run_forked(
      [&](int fd) {
        try {
          pin_to_cpu(cpu);
          ProblemData p = ProblemData::make(r.shape, load_isa(o.isa).lanes, 1000, 20221101);
          std::string missing;
          auto dn = make_onednn(p, &missing);
          dn->run();
          std::string err = check_output(p, dn->output(), "oneDNN", "check the libdnnl installation");
          if (!err.empty()) throw Error(err);
          Timing t = time_calls([&] { dn->run(); }, TimingProtocol{o.min_repeat_ms, o.repeat, 1});
          write_line(fd, fmt::format("ok {:.9g} {}", t.median_s, dn->impl()));
        } catch (const std::exception& e) {
          write_line(fd, std::string("error ") + e.what());
        }
        return 0;
      },
      std::max(120.0, o.timeout_s));
  for (const auto& line : fr.lines) {
    std::istringstream ss(line);
    std::string word;
    ss >> word;
    if (word == "ok") {
      ss >> c.seconds >> c.impl;
      c.gflops = r.shape.flops() / c.seconds * 1e-9;
      c.ratio = r.best.gflops / c.gflops;
      return c;
    }
    if (word == "error") {
      std::getline(ss >> std::ws, c.error);
      return c;
    }
  }
  c.error = fr.timed_out ? "oneDNN timed out" : "the oneDNN child died before reporting";
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
