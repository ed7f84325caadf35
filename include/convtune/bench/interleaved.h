#pragma once
// The one timing loop of `bench` and `bench --library`: rounds in which every
// implementation is measured once (after a discarded call: the one timing
// protocol with repeat 1), each measurement with the clock probe beside it,
// in measure.h round_order (odd rounds reversed).
// The clock of these machines moves between 3.5 and 4.5 GHz within a run;
// timing all of one implementation's measurements before the next one's let
// such a change fall between them and bias the ratio.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convtune/bench/bench_entry.h"
#include "convtune/execution/clock_probe.h"

namespace convtune {

struct TimedCall {
  BenchEntry* entry;
  std::function<void()> call;
  bool computes = true;  // false: no multiply-adds (the triad yardstick), so no FLOP bound on its samples
};

/// The probe of both bench commands: one core's peak measured in its own
/// process (runner.h, as tune measures it; `dir` holds its executable), and
/// the probe sized for it (its reference_gflops).
std::unique_ptr<ClockProbe> one_core_probe(const Isa& isa, int cpu, const std::string& dir, double min_repeat_ms);

/// Sets each entry's samples (at the probe's reference speed), probe_gflops,
/// seconds (their median) and wall_seconds (the median as measured). A
/// sample whose scaled time puts `real_flops` (one call's real multiply-adds)
/// above `cores` times the peak loop keeps its wall-clock time instead, as
/// tune's search and finalists do (measure.h trusted_seconds): a disturbed
/// probe beside it shrank the scaling, not the implementation's time.
void time_interleaved(const std::vector<TimedCall>& impls, double min_ms, int rounds, ClockProbe& probe,
                      double real_flops, int cores);

}  // namespace convtune
