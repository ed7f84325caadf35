// The clock probe in convtune's own process (clock_probe.h).
#include "convtune/execution/clock_probe.h"

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/driver_cache.h"
#include "convtune/ukernel/peak.h"

namespace convtune {

ClockProbe::ClockProbe(const Isa& isa, double reference_gflops)
    : isa_(isa), reference_(reference_gflops), iters_(probe_iters(isa, reference_gflops)), wd_("probe") {
  const std::string src = wd_.path() + "/probe.c", so = wd_.path() + "/probe.so";
  const std::string source = emit_peak_source(isa);
  write_work_file(src, source);
  // From the driver cache when it has this compiler's build of this source.
  const Compiler cc = Compiler::from_env(isa.cflags);
  std::vector<std::string> inputs = cc.output_flags;
  inputs.push_back(source);
  const std::string cache_key = compiled_key(cc, inputs);
  if (!fetch_compiled(cache_key, {"probe.so"}, wd_.path())) {
    CompileResult built = compile_one(cc, {src, so});
    if (!built.ok)
      throw Error(fmt::format("the peak loop (the clock probe) does not compile ({}); set CC to a working C compiler",
                              built.log.substr(0, built.log.find('\n'))));
    store_compiled(cache_key, {"probe.so"}, wd_.path());
  }
  lib_ = std::make_unique<DynLib>(so);
  peak_ = reinterpret_cast<double (*)(long, const float*)>(lib_->symbol("ct_peak"));
  seed_ = reinterpret_cast<const float*>(lib_->symbol("ct_peak_seed"));
}

std::function<void()> ClockProbe::call() {
  return [this] {
    sink_ = sink_ + peak_(iters_, seed_);
  };
}

std::vector<double> ClockProbe::at_reference(const Timing& t, std::vector<double>* probe_gflops) const {
  const std::vector<double> g = convtune::probe_gflops(isa_, iters_, t.probe_s);
  if (probe_gflops) probe_gflops->insert(probe_gflops->end(), g.begin(), g.end());
  return convtune::at_reference(t.samples_s, g, reference_);
}

}  // namespace convtune
