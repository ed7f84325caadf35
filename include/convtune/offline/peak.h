#pragma once
// The machine's practical FP32 peak: independent FMA chains generated from
// the ISA description, compiled with the system compiler, run pinned.
#include <string>

#include "convtune/execution/compiler.h"
#include "convtune/core/isa.h"

namespace convtune {

/// C source of the peak loop: `double ct_peak(long iters)` runs iters
/// iterations of isa.peak_accumulators independent vector FMAs and returns
/// a value that depends on them (so nothing is optimised away).
std::string emit_peak_source(const Isa& isa);

/// Flops done by ct_peak(iters).
double peak_flops(const Isa& isa, long iters);

/// Compiles the peak loop into workdir once; returns the .so path.
/// Throws Error with the compiler's message when it fails.
std::string build_peak(const Isa& isa, const Compiler& cc, const std::string& workdir);

/// Runs the peak loop in a child pinned to `cpu`: 5 samples of ~0.2 s after
/// a warm-up; returns the median GFLOP/s. Throws Error if the child fails.
double measure_peak(const Isa& isa, const std::string& so_path, int cpu);

}  // namespace convtune
