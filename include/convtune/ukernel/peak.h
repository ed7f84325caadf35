#pragma once
// The machine's practical FP32 peak: independent FMA chains generated from
// the ISA description; Runner::peak_gflops (runner.h) builds and times them.
#include <string>
#include <vector>

#include "convtune/core/isa.h"

namespace convtune {

/// C source of the peak loop: `double ct_peak(long iters)` runs iters
/// iterations of isa.peak_accumulators independent vector FMAs and returns
/// a value that depends on them (so nothing is optimised away).
std::string emit_peak_source(const Isa& isa);

/// Flops done by ct_peak(iters).
double peak_flops(const Isa& isa, long iters);

/// Iterations of ct_peak for the clock probe (microkernels/timing.h): about
/// a quarter of a millisecond at `reference_gflops`. Eleven probes of two
/// calls each add about 5 % to a 100 ms measurement.
long probe_iters(const Isa& isa, double reference_gflops);

/// The probe's speed in GFLOP/s for each timed ct_peak(iters) call of probe_s seconds.
std::vector<double> probe_gflops(const Isa& isa, long iters, const std::vector<double>& probe_s);

}  // namespace convtune
