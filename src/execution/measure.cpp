// The C++ side of the one timing protocol: microkernels/timing.c does the
// work (the driver runs the same code), with PAPI's clock and counters.
#include "convtune/execution/measure.h"

#include <algorithm>

#include "convtune/execution/timer.h"
#include "timing.h"

namespace convtune {

namespace {

struct Env {
  const std::function<void()>* call;
  Counters* counters;
};

void call_it(void* ctx) { (*static_cast<Env*>(ctx)->call)(); }
void probe_it(void* ctx) { (*static_cast<const std::function<void()>*>(ctx))(); }
int64_t clock_ns(void*) { return now_ns(); }
void counters_start(void* env) { static_cast<Env*>(env)->counters->start(); }
int counters_stop(void* env, long long* values) {
  std::vector<long long> v = static_cast<Env*>(env)->counters->stop();
  int n = 0;
  for (; n < int(v.size()) && n < CT_MAX_COUNTERS; ++n) values[n] = v[size_t(n)];
  return n;
}

}  // namespace

double median(std::vector<double> v) { return ct_median(v.data(), int(v.size())); }

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const size_t lo = size_t(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
}

std::vector<double> at_reference(const std::vector<double>& wall_s, const std::vector<double>& probe_gflops,
                                 double reference_gflops) {
  std::vector<double> v(wall_s);
  for (size_t i = 0; i < v.size() && i < probe_gflops.size(); ++i) v[i] *= probe_gflops[i] / reference_gflops;
  return v;
}

double trusted_seconds(double scaled_s, double wall_s, double real_flops, double peak_gflops) {
  if (scaled_s <= 0 || peak_gflops <= 0) return scaled_s;
  return real_flops / scaled_s * 1e-9 > 1.03 * peak_gflops ? wall_s : scaled_s;
}

std::vector<size_t> round_order(size_t n, size_t round) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (i + round / 2) % std::max<size_t>(n, 1);
  if (round % 2) std::reverse(v.begin(), v.end());
  return v;
}

Timing time_calls(const std::function<void()>& call, const TimingProtocol& p, Counters* counters) {
  Env env{&call, counters};
  const bool counted = counters && counters->available();
  ct_clock clock{clock_ns, counted ? counters_start : nullptr, counted ? counters_stop : nullptr, &env};
  const ct_protocol proto{p.min_ms, p.repeat, p.discard, p.probe ? probe_it : nullptr,
                          const_cast<std::function<void()>*>(&p.probe), p.calls};
  std::vector<double> samples(size_t(std::max(1, p.repeat))), probes(samples.size());
  ct_timing t{};
  t.samples_s = samples.data();
  t.probe_s = p.probe ? probes.data() : nullptr;
  ct_time_calls(call_it, &env, &proto, &clock, &t);
  Timing r;
  r.median_s = t.median_s;
  r.samples_s.assign(samples.begin(), samples.begin() + t.n_samples);
  if (p.probe) r.probe_s.assign(probes.begin(), probes.begin() + t.n_samples);
  r.calls_per_sample = t.calls_per_sample;
  r.counters.assign(t.counters, t.counters + t.n_counters);
  return r;
}

}  // namespace convtune
