/* main() for generated code run under an emulator (qemu-user). convtune's
 * emulated runner (src/emulated_runner.cpp) links it with generated C into one
 * static executable. It allocates the operands, checks the code against a
 * scalar reference (microkernels/CONTRACT.md; for whole convolutions the
 * reference values come from the host, runner.h), times it with the protocol
 * of src/measure.cpp and prints one result line each. Under emulation the
 * timings are not meaningful.
 *
 *   conv DATA MIN_MS REPEAT DISCARD       CT_CONV (-DCT_CONV=name) on DATA
 *   ukernels NC_VERIFY NC_TIME MIN_MS REPEAT DISCARD LANES
 *            {POS INDEX k c w h r s IROW IPIX ST WR WS WC OROW OPIX}...
 *                                         ct_profile_fns[INDEX] (profile units)
 *   peak ITERS MIN_MS REPEAT DISCARD      ct_peak (peak.h)
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*ct_ukernel_fn)(const float *, const float *, float *, long, int);
extern const ct_ukernel_fn ct_profile_fns[] __attribute__((weak));
extern double ct_peak(long iters, const float *seed) __attribute__((weak));
#ifdef CT_CONV
void CT_CONV(const float *restrict input, const float *restrict weights, float *restrict output);
#endif

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double absd(double x) { return x < 0 ? -x : x; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef void (*call_fn)(void *ctx);

/* src/measure.cpp's protocol: warm up, calibrate a call count lasting MIN_MS,
   discard, keep REPEAT samples (seconds per call); returns the median. */
static double time_calls(call_fn call, void *ctx, double min_ms, int repeat, int discard, double *samples) {
  double t0 = now_s(), one, target = min_ms * 1e-3, sorted[64];
  long n = 1;
  call(ctx);
  one = now_s() - t0;
  if (one < target) {
    n = (long)(target / (one > 1e-9 ? one : 1e-9) * 0.5);
    if (n < 1) n = 1;
    for (;;) {
      double a = now_s(), s;
      long m;
      for (long i = 0; i < n; ++i) call(ctx);
      s = now_s() - a;
      if (s >= target) break;
      m = (long)((double)n * target / (s > 1e-9 ? s : 1e-9) * 1.1);
      n = m > n + 1 ? m : n + 1;
    }
  }
  if (repeat > 64) repeat = 64;
  if (repeat < 1) repeat = 1;
  for (int rep = 0; rep < discard + repeat; ++rep) {
    double a = now_s();
    for (long i = 0; i < n; ++i) call(ctx);
    if (rep >= discard) samples[rep - discard] = (now_s() - a) / (double)n;
  }
  memcpy(sorted, samples, sizeof(double) * (size_t)repeat);
  qsort(sorted, (size_t)repeat, sizeof(double), cmp_double);
  return repeat % 2 ? sorted[repeat / 2] : 0.5 * (sorted[repeat / 2 - 1] + sorted[repeat / 2]);
}

static uint64_t rng_state = 88172645463325252ull;
static float rnd(void) { /* xorshift64, uniform in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    printf("error out of memory\n");
    exit(2);
  }
  return p;
}

/* ---- conv: operands and reference values written by the host ---------- */
struct conv_ctx {
  const float *in, *w;
  float *out;
};
#ifdef CT_CONV
static void conv_call(void *p) {
  struct conv_ctx *c = p;
  CT_CONV(c->in, c->w, c->out);
}
#endif

static int run_conv(char **argv) {
#ifndef CT_CONV
  (void)argv;
  printf("error built without a convolution (-DCT_CONV=name)\n");
  return 2;
#else
  FILE *f = fopen(argv[0], "rb");
  char magic[8];
  int64_t n[4];
  double tol, worst = 0, samples[64], med;
  int64_t worst_at = -1;
  int repeat = atoi(argv[2]), discard = atoi(argv[3]);
  if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "CTPROB1", 8) != 0 || fread(n, 8, 4, f) != 4 ||
      fread(&tol, 8, 1, f) != 1) {
    printf("error cannot read %s\n", argv[0]);
    return 2;
  }
  float *in = xmalloc(sizeof(float) * (size_t)n[0]), *w = xmalloc(sizeof(float) * (size_t)n[1]),
        *out = xmalloc(sizeof(float) * (size_t)n[2]);
  int64_t *idx = xmalloc(sizeof(int64_t) * (size_t)n[3]);
  double *val = xmalloc(sizeof(double) * (size_t)n[3]);
  if (fread(in, 4, (size_t)n[0], f) != (size_t)n[0] || fread(w, 4, (size_t)n[1], f) != (size_t)n[1] ||
      fread(idx, 8, (size_t)n[3], f) != (size_t)n[3] || fread(val, 8, (size_t)n[3], f) != (size_t)n[3]) {
    printf("error %s is truncated\n", argv[0]);
    return 2;
  }
  fclose(f);
  /* The kernel overwrites its output: start from NaN so a skipped element shows. */
  for (int64_t i = 0; i < n[2]; ++i) out[i] = NAN;
  CT_CONV(in, w, out);
  for (int64_t i = 0; i < n[3]; ++i) {
    double err = absd((double)out[idx[i]] - val[i]);
    if (!(err <= tol) && (worst_at < 0 || !(err <= worst))) {
      worst = err;
      worst_at = idx[i];
    }
  }
  if (worst_at >= 0) {
    printf("wrong_result output element %lld differs from the reference by %.3g (tolerance %.3g)\n",
           (long long)worst_at, worst, tol);
    return 0;
  }
  printf("verified\n");
  fflush(stdout);
  struct conv_ctx c = {in, w, out};
  med = time_calls(conv_call, &c, atof(argv[1]), repeat, discard, samples);
  printf("ok %.9g samples", med);
  for (int i = 0; i < repeat && i < 64; ++i) printf(" %.9g", samples[i]);
  printf("\n");
  return 0;
#endif
}

/* ---- ukernels: the contract's scalar reference ------------------------- */
enum { K, C, W, H, R, S, IROW, IPIX, ST, WR, WS, WC, OROW, OPIX, NPARAM };

static void ref_ukernel(const long *d, long lanes, const float *I, const float *Wt, float *O, long nc, int acc) {
  for (long h = 0; h < d[H]; ++h)
    for (long w = 0; w < d[W]; ++w)
      for (long kk = 0; kk < d[K] * lanes; ++kk) {
        float *o = &O[h * d[OROW] + w * d[OPIX] + kk];
        double sum = acc ? *o : 0.0;
        for (long c = 0; c < nc * d[C]; ++c)
          for (long r = 0; r < d[R]; ++r)
            for (long s = 0; s < d[S]; ++s)
              sum += (double)I[(h * d[ST] + r) * d[IROW] + (w * d[ST] + s) * d[IPIX] + c] *
                     Wt[r * d[WR] + s * d[WS] + c * d[WC] + kk];
        *o = (float)sum;
      }
}

struct uk_ctx {
  ct_ukernel_fn fn;
  const float *in, *w;
  float *out;
  long nc;
};
static void uk_call(void *p) {
  struct uk_ctx *c = p;
  c->fn(c->in, c->w, c->out, c->nc, 1);
}

static int same(const float *a, const float *b, long n, double tol) {
  for (long j = 0; j < n; ++j)
    if (!(absd((double)a[j] - (double)b[j]) <= tol)) return 0;
  return 1;
}

static int run_ukernels(int argc, char **argv) {
  long ncv = atol(argv[0]), nct = atol(argv[1]), lanes = atol(argv[5]);
  long ncm = ncv > nct ? ncv : nct;
  double min_ms = atof(argv[2]), samples[64];
  int repeat = atoi(argv[3]), discard = atoi(argv[4]);
  if (!ct_profile_fns) {
    printf("error built without ct_profile_fns\n");
    return 2;
  }
  for (int a = 6; a + 2 + NPARAM <= argc; a += 2 + NPARAM) {
    long pos = atol(argv[a]), index = atol(argv[a + 1]), d[NPARAM];
    for (int i = 0; i < NPARAM; ++i) d[i] = atol(argv[a + 2 + i]);
    long n_in = ((d[H] - 1) * d[ST] + d[R] - 1) * d[IROW] + ((d[W] - 1) * d[ST] + d[S] - 1) * d[IPIX] + ncm * d[C];
    long n_w = (d[R] - 1) * d[WR] + (d[S] - 1) * d[WS] + (ncm * d[C] - 1) * d[WC] + d[K] * lanes;
    long n_out = (d[H] - 1) * d[OROW] + (d[W] - 1) * d[OPIX] + d[K] * lanes;
    float *in = xmalloc(sizeof(float) * (size_t)n_in), *w = xmalloc(sizeof(float) * (size_t)n_w),
          *out = xmalloc(sizeof(float) * (size_t)n_out), *ref = xmalloc(sizeof(float) * (size_t)n_out);
    const double tol = 1e-5 * (double)(2 * ncv * d[C] * d[R] * d[S] + 1);
    ct_ukernel_fn fn = ct_profile_fns[index];
    for (long j = 0; j < n_in; ++j) in[j] = rnd();
    for (long j = 0; j < n_w; ++j) w[j] = rnd();
    for (long j = 0; j < n_out; ++j) out[j] = ref[j] = rnd();
    /* Overwrite mode on NaN garbage, then accumulate; the gaps between output
       rows and pixels must keep their values. */
    for (long h = 0; h < d[H]; ++h)
      for (long x = 0; x < d[W]; ++x)
        for (long k = 0; k < d[K] * lanes; ++k) out[h * d[OROW] + x * d[OPIX] + k] = NAN;
    fn(in, w, out, ncv, 0);
    ref_ukernel(d, lanes, in, w, ref, ncv, 0);
    int good = same(out, ref, n_out, tol);
    fn(in, w, out, ncv, 1);
    ref_ukernel(d, lanes, in, w, ref, ncv, 1);
    good = good && same(out, ref, n_out, 2 * tol);
    if (!good) {
      printf("%ld wrong_result 0\n", pos);
    } else {
      struct uk_ctx c = {fn, in, w, out, nct};
      printf("%ld ok %.9g\n", pos, time_calls(uk_call, &c, min_ms, repeat, discard, samples));
    }
    fflush(stdout);
    free(in);
    free(w);
    free(out);
    free(ref);
  }
  return 0;
}

/* ---- peak --------------------------------------------------------------- */
struct peak_ctx {
  long iters;
  volatile double sink;
};
static void peak_call(void *p) {
  static const float seed[3] = {0.999999f, 1e-7f, 0.5f};
  struct peak_ctx *c = p;
  c->sink = c->sink + ct_peak(c->iters, seed);
}

static int run_peak(char **argv) {
  double samples[64];
  struct peak_ctx c = {atol(argv[0]), 0};
  if (!ct_peak) {
    printf("error built without ct_peak\n");
    return 2;
  }
  printf("ok %.9g\n", time_calls(peak_call, &c, atof(argv[1]), atoi(argv[2]), atoi(argv[3]), samples));
  return 0;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc >= 6 && strcmp(argv[1], "conv") == 0) rc = run_conv(argv + 2);
  else if (argc >= 8 && strcmp(argv[1], "ukernels") == 0) rc = run_ukernels(argc - 2, argv + 2);
  else if (argc >= 6 && strcmp(argv[1], "peak") == 0) rc = run_peak(argv + 2);
  else printf("error usage: %s conv|ukernels|peak ARGS (see microkernels/emulated_driver.c)\n", argv[0]);
  fflush(stdout);
  return rc;
}
