#pragma once
// The clock probe for what convtune times in its own process (bench, tune's
// oneDNN comparison): the ISA's peak loop (ukernel/peak.h) built with $CC into
// a shared object. Generated code gets the same loop linked into its driver
// (runner.h run_conv). Why a probe at all: microkernels/timing.h ct_protocol.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convtune/core/isa.h"
#include "convtune/execution/dynlib.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/workdir.h"

namespace convtune {

class ClockProbe {
 public:
  /// Builds the probe for `isa`, sized for `reference_gflops` (one core's
  /// measured peak; peak.h probe_iters). Throws Error when it does not build.
  ClockProbe(const Isa& isa, double reference_gflops);
  /// The probe call, for TimingProtocol::probe.
  std::function<void()> call();
  /// A timing's samples at the reference speed (measure.h at_reference); the
  /// probe's speed beside each sample is appended to probe_gflops.
  std::vector<double> at_reference(const Timing& t, std::vector<double>* probe_gflops) const;
  double reference_gflops() const { return reference_; }

 private:
  Isa isa_;
  double reference_;
  long iters_;
  WorkDir wd_;
  std::unique_ptr<DynLib> lib_;
  double (*peak_)(long, const float*) = nullptr;
  const float* seed_ = nullptr;  // ct_peak_seed, beside ct_peak in the generated source
  double sink_ = 0;
};

}  // namespace convtune
