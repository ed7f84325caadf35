#include "convtune/execution/measure.h"

#include <algorithm>

#include "convtune/execution/timer.h"

namespace convtune {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_calls(const std::function<void()>& call, const TimingProtocol& p, Counters* counters) {
  Timing t;
  // Warm-up call (first touch, caches, instruction cache).
  int64_t t0 = now_ns();
  call();
  double one = double(now_ns() - t0) * 1e-9;
  // Calibrate: grow the count until one sample lasts min_ms.
  const double target = p.min_ms * 1e-3;
  int64_t n = 1;
  if (one < target) {
    n = std::max<int64_t>(1, int64_t(target / std::max(one, 1e-9) * 0.5));
    for (;;) {
      int64_t a = now_ns();
      for (int64_t i = 0; i < n; ++i) call();
      double s = double(now_ns() - a) * 1e-9;
      if (s >= target) break;
      n = std::max<int64_t>(n + 1, int64_t(double(n) * target / std::max(s, 1e-9) * 1.1));
    }
  }
  t.calls_per_sample = n;
  for (int rep = 0; rep < p.discard + p.repeat; ++rep) {
    bool keep = rep >= p.discard;
    if (keep && counters) counters->start();
    int64_t a = now_ns();
    for (int64_t i = 0; i < n; ++i) call();
    double s = double(now_ns() - a) * 1e-9 / double(n);
    if (keep && counters) {
      auto v = counters->stop();
      if (t.counters.size() < v.size()) t.counters.resize(v.size(), 0);
      for (size_t i = 0; i < v.size(); ++i) t.counters[i] += v[i];
    }
    if (keep) t.samples_s.push_back(s);
  }
  t.median_s = median(t.samples_s);
  return t;
}

}  // namespace convtune
