#include "convtune/bench/interleaved.h"

#include <algorithm>

#include "convtune/execution/measure.h"
#include "convtune/execution/runner.h"

namespace convtune {

std::unique_ptr<ClockProbe> one_core_probe(const Isa& isa, int cpu, const std::string& dir, double min_repeat_ms) {
  const double peak = Runner(isa, false, cpu, dir).peak_gflops(peak_min_ms(min_repeat_ms));
  return std::make_unique<ClockProbe>(isa, peak);
}

void time_interleaved(const std::vector<TimedCall>& impls, double min_ms, int rounds, ClockProbe& probe,
                      double real_flops, int cores) {
  const TimingProtocol one{min_ms, 1, 1, probe.call()};
  const double bound_gflops = probe.reference_gflops() * std::max(1, cores);
  std::vector<std::vector<double>> wall(impls.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i : round_order(impls.size(), size_t(round))) {
      const Timing tm = time_calls(impls[i].call, one);
      wall[i].push_back(tm.median_s);
      const double scaled = probe.at_reference(tm, &impls[i].entry->probe_gflops).at(0);
      impls[i].entry->samples.push_back(trusted_seconds(scaled, tm.median_s, impls[i].computes ? real_flops : 0.0, bound_gflops));
    }
  for (size_t i = 0; i < impls.size(); ++i) {
    impls[i].entry->wall_seconds = median(wall[i]);
    impls[i].entry->seconds = median(impls[i].entry->samples);
  }
}

}  // namespace convtune
