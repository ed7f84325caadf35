#pragma once
// The one timing loop of `bench` and `bench --library`: rounds in which every
// implementation is measured once (after a discarded call: the one timing
// protocol with repeat 1), each measurement with the clock probe beside it.
// The clock of these machines moves between 3.5 and 4.5 GHz within a run;
// timing all of one implementation's measurements before the next one's let
// such a change fall between them and bias the ratio.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convtune/bench/bench.h"
#include "convtune/execution/clock_probe.h"

namespace convtune {

struct TimedCall {
  BenchEntry* entry;
  std::function<void()> call;
};

/// The probe of both bench commands: one core's peak measured in its own
/// process (runner.h, as tune measures it; `dir` holds its executable), and
/// the probe sized for it (its reference_gflops).
std::unique_ptr<ClockProbe> one_core_probe(const Isa& isa, int cpu, const std::string& dir, double min_repeat_ms);

/// Sets each entry's samples (at the probe's reference speed), probe_gflops,
/// seconds (their median) and wall_seconds (the median as measured).
void time_interleaved(const std::vector<TimedCall>& impls, double min_ms, int rounds, ClockProbe& probe);

}  // namespace convtune
