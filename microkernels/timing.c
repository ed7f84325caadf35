/* The timing protocol; see timing.h. */
#include "timing.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double ct_median(const double *v, int n) {
  double *s, m;
  if (n <= 0) return 0;
  s = malloc(sizeof(double) * (size_t)n);
  if (!s) return v[0];
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  free(s);
  return m;
}

/* One probe: the first call absorbs a change of power license or clock that
   the calls before it leave (after AVX2 code an AVX-512 probe can run up to
   5 % slower); the second is timed. */
static double probe_once(const ct_protocol *p, const ct_clock *clock) {
  int64_t a;
  p->probe(p->probe_ctx);
  a = clock->now_ns(clock->env);
  p->probe(p->probe_ctx);
  return (double)(clock->now_ns(clock->env) - a) * 1e-9;
}

void ct_time_calls(void (*call)(void *), void *ctx, const ct_protocol *p, const ct_clock *clock, ct_timing *out) {
  const double target = p->min_ms * 1e-3;
  const int repeat = p->repeat < 1 ? 1 : p->repeat;
  int64_t n = 1, t0;
  double one;
  long long values[CT_MAX_COUNTERS];
  out->n_samples = 0;
  out->n_counters = 0;
  memset(out->counters, 0, sizeof out->counters);
  /* Warm-up call (first touch, caches, instruction cache). */
  t0 = clock->now_ns(clock->env);
  call(ctx);
  one = (double)(clock->now_ns(clock->env) - t0) * 1e-9;
  /* A first call that lasts a whole measurement may only have been cold (a
     thread pool's start, first-touch page faults): a second, warm one decides
     whether a call alone is a measurement. */
  if (one >= target) {
    t0 = clock->now_ns(clock->env);
    call(ctx);
    one = (double)(clock->now_ns(clock->env) - t0) * 1e-9;
  }
  /* Calibrate: grow the count until one measurement lasts min_ms. */
  if (p->calls > 0) {
    n = p->calls;
  } else if (one < target) {
    n = (int64_t)(target / (one > 1e-9 ? one : 1e-9) * 0.5);
    if (n < 1) n = 1;
    for (;;) {
      int64_t a = clock->now_ns(clock->env), m;
      double s;
      for (int64_t i = 0; i < n; ++i) call(ctx);
      s = (double)(clock->now_ns(clock->env) - a) * 1e-9;
      if (s >= target) break;
      m = (int64_t)((double)n * target / (s > 1e-9 ? s : 1e-9) * 1.1);
      n = m > n + 1 ? m : n + 1;
    }
  }
  out->calls_per_sample = n;
  for (int rep = 0; rep < p->discard + repeat; ++rep) {
    const int keep = rep >= p->discard;
    const int counted = keep && clock->counters_start && clock->counters_stop;
    /* Without a probe one chunk; with one, the calls split evenly into
       chunks with a probe before each and after the last, so that even a
       single call is bracketed. */
    const int64_t chunks = !p->probe ? 1 : n < CT_PROBE_CHUNKS ? n : CT_PROBE_CHUNKS;
    double calls_s = 0, probe_s = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t calls = n * (c + 1) / chunks - n * c / chunks;
      int64_t a;
      if (p->probe) probe_s += probe_once(p, clock);
      if (counted) clock->counters_start(clock->env);
      a = clock->now_ns(clock->env);
      for (int64_t i = 0; i < calls; ++i) call(ctx);
      calls_s += (double)(clock->now_ns(clock->env) - a) * 1e-9;
      if (counted) {
        int got = clock->counters_stop(clock->env, values);
        if (got > CT_MAX_COUNTERS) got = CT_MAX_COUNTERS;
        for (int i = 0; i < got; ++i) out->counters[i] += values[i];
        if (got > out->n_counters) out->n_counters = got;
      }
    }
    if (p->probe) probe_s += probe_once(p, clock);
    if (keep) {
      if (out->probe_s) out->probe_s[out->n_samples] = probe_s / (double)(chunks + 1);
      out->samples_s[out->n_samples++] = calls_s / (double)n;
    }
  }
  out->median_s = ct_median(out->samples_s, out->n_samples);
}
