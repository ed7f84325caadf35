// run_tune as the sequence of its stages (tune_stages.h); each stage's file
// says how it does its part.
#include "convtune/tune/tune_stages.h"

#include <chrono>

namespace convtune {

TuneResult run_tune(const TuneOptions& opt) {
  TuneSession s(opt);
  tune_setup(s);         // argument errors here, before any work
  tune_seed_transfer(s); // the store's neighbours, as they are when this layer starts
  tune_start_runner(s);  // the driver and the peak; the resumed records observed
  tune_announce(s);
  tune_search(s);        // every candidate in the log as soon as it is measured
  tune_recheck_peak(s);
  tune_finalists(s);
  tune_deliver(s);
  s.res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  return std::move(s.res);
}

}  // namespace convtune
