/* The timing protocol (000 §5, TVM's evaluator), one implementation for the
 * driver that runs generated code (driver.c) and for convtune itself
 * (src/execution/measure.cpp, which bench uses in-process): warm up, calibrate a
 * call count that lasts at least min_ms, discard the first measurements, keep
 * `repeat`, report the median per call. */
#ifndef CT_TIMING_H
#define CT_TIMING_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { CT_MAX_COUNTERS = 8 };

typedef struct {
  double min_ms; /* one measurement lasts at least this long */
  int repeat;    /* measurements kept (at least 1) */
  int discard;   /* measurements thrown away first */
} ct_protocol;

/* The clock and, optionally, hardware counters read around each kept measurement. */
typedef struct {
  int64_t (*now_ns)(void *env);
  void (*counters_start)(void *env);                  /* NULL: no counters */
  int (*counters_stop)(void *env, long long *values); /* returns how many it wrote */
  void *env;
} ct_clock;

typedef struct {
  double median_s;           /* per call */
  double *samples_s;         /* the caller's array of `repeat` entries: per call, kept measurements */
  int n_samples;
  int64_t calls_per_sample;
  long long counters[CT_MAX_COUNTERS]; /* summed over the kept measurements */
  int n_counters;
} ct_timing;

/* Times call(ctx) under p; out->samples_s must hold p->repeat values. */
void ct_time_calls(void (*call)(void *), void *ctx, const ct_protocol *p, const ct_clock *clock, ct_timing *out);

/* The median of v[0..n) (0 when n is 0); v is left unchanged. */
double ct_median(const double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
