/* The timing protocol (000 §5, TVM's evaluator), one implementation for the
 * driver that runs generated code (driver.c) and for convtune itself
 * (src/execution/measure.cpp, which bench uses in-process): warm up, calibrate a
 * call count that lasts at least min_ms, discard the first measurements, keep
 * `repeat`, report the median per call. With a clock probe, each measurement
 * also carries the speed the core had while it ran (see ct_protocol). */
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
  /* The clock probe, or NULL: fixed work (the ISA's peak FMA loop, peak.h)
     timed before each of CT_PROBE_CHUNKS chunks of every measurement and
     after the last one, each time after an untimed call of its own. The
     speed of a shared VM can move by up to a third within 0.1 s (a
     neighbour, a clock between base and boost); a probe interleaved with the
     calls sees the same moments, so kernel time over probe time ranks
     kernels measured at different moments. */
  void (*probe)(void *ctx);
  void *probe_ctx;
  /* Calls per measurement as an earlier calibration of the same call found
     it, or 0: calibrate. The finalists' duel takes many short samples of
     each kernel, and a calibration each time would cost more than the
     sample itself. */
  int64_t calls;
} ct_protocol;

enum { CT_PROBE_CHUNKS = 10 };

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
  double *probe_s;           /* the caller's array of `repeat` entries or NULL: per timed probe call, the
                                mean beside each kept measurement (0 without a probe) */
  int n_samples;
  int64_t calls_per_sample;
  long long counters[CT_MAX_COUNTERS]; /* summed over the kept measurements */
  int n_counters;
} ct_timing;

/* Times call(ctx) under p; out->samples_s (and out->probe_s, unless NULL)
   must hold p->repeat values. Counters, when read, cover the calls only. */
void ct_time_calls(void (*call)(void *), void *ctx, const ct_protocol *p, const ct_clock *clock, ct_timing *out);

/* The median of v[0..n) (0 when n is 0); v is left unchanged. */
double ct_median(const double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
