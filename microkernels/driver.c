/* main() for all generated code convtune runs. convtune (src/execution/runner.cpp)
 * links it with one generated C file -- a convolution candidate or a profile
 * unit (ct_profile_fns[]) -- the peak loop (ct_peak) and timing.c into one
 * executable, built natively ($CC, with PAPI) and run directly, or
 * cross-compiled ($CROSS_CC, static, no PAPI) and run under qemu-user. It pins
 * itself to CPU, checks the code against a reference (microkernels/CONTRACT.md;
 * for whole convolutions the reference values come from convtune, runner.h),
 * times it with timing.c and prints one JSON object per line on stdout:
 *
 *   CPU conv DATA MIN_MS REPEAT DISCARD [PROBE_ITERS]
 *       ct_conv_pack, then ct_conv_entry on DATA,
 *       or ct_conv_entry_epilogue when DATA has a bias (CONTRACT.md "Generated
 *       convolutions", "Epilogues"; checked with the input, bias and residual
 *       against an inaccessible page on either side, the bias and residual
 *       unmodified, and guard zones around the packed weights and the output)
 *       {"event":"verified"}, then {"status":"ok","median_s":..,"samples":[..],
 *       "calls_per_sample":..,"counters":[..],"counter_names":".."} or
 *       {"status":"wrong_result","detail":".."}; with PROBE_ITERS > 0, ct_peak of
 *       that many iterations is the clock probe (timing.h) and "probe_s":[..]
 *       follows "samples", seconds per probe beside each sample
 *   CPU ukernels NC_VERIFY NC_TIME MIN_MS REPEAT DISCARD LANES
 *       {POS INDEX k c w h r s IROW IPIX ST WR WS WC WIT OROW OPIX STW DH DW}...
 *       {"pos":..,"status":"ok"|"wrong_result","median_s":..,"counters":[per call]}
 *       per microkernel ct_profile_fns[INDEX]
 *   CPU peak ITERS MIN_MS REPEAT DISCARD    {"status":"ok","median_s":..} for ct_peak
 *
 * CPU -1 does not pin. CPU is one CPU or a list ("2,3"): with several, the
 * process is pinned to that set and, natively, re-executes itself once so that
 * an OpenMP runtime (a candidate with P loops, codegen.h) starts inside the
 * set with OMP_PROC_BIND=close and OMP_PLACES=threads: each OpenMP thread gets
 * one CPU of the set. Anything that stops it early is {"status":"error","detail":".."}.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <signal.h>
#include <unistd.h>
#include <time.h>

#include "check.h"
#include "reference.h"
#include "timing.h"
#ifdef CT_PAPI
#include <papi.h>
#endif

typedef void (*ct_ukernel_fn)(const float *, long, const float *, float *, long, int);
extern const ct_ukernel_fn ct_profile_fns[] __attribute__((weak));
extern double ct_peak(long iters, const float *seed) __attribute__((weak));
extern float ct_peak_seed[3] __attribute__((weak)); /* beside ct_peak (ukernel/peak.cpp) */
/* A convolution candidate is compiled with -D<its name>=ct_conv_entry,
   -D<its name>_pack=ct_conv_pack, -D<its name>_packed_floats=ct_conv_packed_floats. */
extern void ct_conv_entry(const float *restrict input, const float *restrict weights, float *restrict output)
    __attribute__((weak));
/* The same with an epilogue: compiled with -D<its name>=ct_conv_entry_epilogue instead. */
extern void ct_conv_entry_epilogue(const float *restrict input, const float *restrict weights,
                                   const float *restrict bias, const float *restrict residual,
                                   float *restrict output) __attribute__((weak));
extern void ct_conv_pack(const float *restrict kcrs, float *restrict packed) __attribute__((weak));
extern const unsigned long ct_conv_packed_floats __attribute__((weak));

/* ---- JSON lines ---------------------------------------------------------- */
static void json_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

static void report(const char *status, const char *detail) {
  printf("{\"status\":\"%s\",\"detail\":", status);
  json_string(detail);
  printf("}\n");
  fflush(stdout);
}

static void *allocated(void *p) {
  if (!p) {
    report("error", "out of memory");
    exit(2);
  }
  return p;
}
static void *xmalloc(size_t n) { return allocated(malloc(n ? n : 1)); }
/* On a 64-byte line, as `convtune bench` gives the kernel its output and
   oneDNN allocates its own (include/convtune/core/aligned.h: malloc's
   16-byte alignment split every vector store of yolo9000-0 over two lines). */
static void *xmalloc_line(size_t n) {
  void *p = NULL;
  return allocated(posix_memalign(&p, 64, n ? n : 1) == 0 ? p : NULL);
}

/* ---- clock and counters: PAPI natively, clock_gettime under emulation ---- */
struct counters {
  int eventset, n, running;
  char names[128];
};

static int64_t now_ns(void *env) {
  (void)env;
#ifdef CT_PAPI
  if (PAPI_is_initialized() != PAPI_NOT_INITED) return PAPI_get_real_nsec();
#endif
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The events src/execution/timer.cpp asks for, with the same names. */
static void counters_open(struct counters *c) {
  c->eventset = -1;
  c->n = 0;
  c->running = 0;
  strcpy(c->names, "none: built without PAPI");
#ifdef CT_PAPI
  static const int codes[] = {PAPI_TOT_CYC, PAPI_L1_DCM, PAPI_L2_DCM};
  static const char *const names[] = {"PAPI_TOT_CYC", "PAPI_L1_DCM", "PAPI_L2_DCM"};
  char why[96] = "no counters";
  long long tmp[CT_MAX_COUNTERS];
  if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
    strcpy(c->names, "none: PAPI failed to initialise");
    return;
  }
  if (PAPI_create_eventset(&c->eventset) != PAPI_OK) {
    strcpy(c->names, "none: PAPI cannot create an event set");
    c->eventset = -1;
    return;
  }
  c->names[0] = 0;
  for (int i = 0; i < 3; ++i) {
    int rc = PAPI_add_event(c->eventset, codes[i]);
    if (rc == PAPI_OK) {
      if (c->n) strcat(c->names, ",");
      strcat(c->names, names[i]);
      ++c->n;
    } else if (strcmp(why, "no counters") == 0) {
      snprintf(why, sizeof why, "%s: %s", names[i], PAPI_strerror(rc));
    }
  }
  /* Some kernels accept the events but refuse to start them. */
  if (c->n) {
    int rc = PAPI_start(c->eventset);
    if (rc == PAPI_OK) {
      PAPI_stop(c->eventset, tmp);
    } else {
      snprintf(why, sizeof why, "PAPI_start: %s", PAPI_strerror(rc));
      c->n = 0;
    }
  }
  if (!c->n) snprintf(c->names, sizeof c->names, "none: %s", why);
#endif
}

static void counters_start(void *env) {
#ifdef CT_PAPI
  struct counters *c = env;
  c->running = PAPI_start(c->eventset) == PAPI_OK;
#else
  (void)env;
#endif
}

static int counters_stop(void *env, long long *values) {
#ifdef CT_PAPI
  struct counters *c = env;
  if (!c->running) return 0;
  c->running = 0;
  return PAPI_stop(c->eventset, values) == PAPI_OK ? c->n : 0;
#else
  (void)env;
  (void)values;
  return 0;
#endif
}

static ct_clock make_clock(struct counters *c) {
  ct_clock k = {now_ns, NULL, NULL, c};
  if (c->n) {
    k.counters_start = counters_start;
    k.counters_stop = counters_stop;
  }
  return k;
}

static ct_protocol protocol(char **argv) { /* MIN_MS REPEAT DISCARD */
  ct_protocol p = {atof(argv[0]), atoi(argv[1]), atoi(argv[2])};
  if (p.repeat < 1) p.repeat = 1;
  if (p.discard < 0) p.discard = 0;
  return p;
}

static double absd(double x) { return x < 0 ? -x : x; }

static uint64_t rng_state = 88172645463325252ull;
static float rnd(void) { /* xorshift64, uniform in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* ---- conv: operands and reference values written by convtune ------------- */
struct conv_ctx {
  const float *in, *w, *bias, *res; /* bias NULL: no epilogue */
  float *out;
};
static void conv_call(void *p) {
  struct conv_ctx *c = p;
  if (c->bias) ct_conv_entry_epilogue(c->in, c->w, c->bias, c->res, c->out);
  else ct_conv_entry(c->in, c->w, c->out);
}

/* n floats right after an inaccessible page (at_end 0) or right before one
   (at_end 1): a read past either end of the input faults instead of passing. */
static float *guarded_floats(size_t n, int at_end) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = n * sizeof(float);
  const size_t span = (bytes + page - 1) / page * page;
  char *m = mmap(NULL, span + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    report("error", "out of memory");
    exit(2);
  }
  mprotect(m, page, PROT_NONE);
  mprotect(m + page + span, page, PROT_NONE);
  return (float *)(at_end ? m + page + span - bytes : m + page);
}

/* Guard zones: CT_GUARD floats on either side of a buffer, holding a pattern
   the code under test has no reason to write; CT_GUARD floats keep the
   buffer on xmalloc_line's 64-byte line. */
enum { CT_GUARD = 64 };
static const uint32_t guard_bits = 0x7fc0dead; /* a NaN with a payload */
static float *with_guards(size_t n) {
  float *b = xmalloc_line(sizeof(float) * (n + 2 * CT_GUARD));
  for (size_t i = 0; i < CT_GUARD; ++i) {
    memcpy(&b[i], &guard_bits, 4);
    memcpy(&b[CT_GUARD + n + i], &guard_bits, 4);
  }
  return b + CT_GUARD;
}
/* "" when both zones are intact, else where the first write landed. */
static const char *guard_damage(const float *b, size_t n, char *msg, size_t len) {
  for (long i = -CT_GUARD; i < (long)CT_GUARD; ++i) {
    const float *g = i < 0 ? b + i : b + n + (size_t)i;
    if (memcmp(g, &guard_bits, 4) != 0) {
      snprintf(msg, len, "%ld float(s) %s", i < 0 ? -i : i + 1, i < 0 ? "before its start" : "past its end");
      return msg;
    }
  }
  return "";
}

/* The read-only operands that are optional (bias, residual): n floats of the
   file at a page's end and a copy at a page's start, as the input; NULL for none. */
struct operand {
  float *high, *low;
  size_t n;
};
static int read_operand(FILE *f, struct operand *o, int64_t n) {
  o->n = (size_t)n;
  o->high = o->low = NULL;
  if (!n) return 1;
  o->high = guarded_floats(o->n, 1);
  o->low = guarded_floats(o->n, 0);
  if (fread(o->high, 4, o->n, f) != o->n) return 0;
  memcpy(o->low, o->high, sizeof(float) * o->n);
  return 1;
}
/* "" when the kernel left both copies as the file has them, else what it wrote. */
static const char *operand_damage(const struct operand *o, const char *name, char *msg, size_t len) {
  for (size_t i = 0; i < o->n; ++i)
    if (memcmp(&o->high[i], &o->low[i], 4) != 0) {
      snprintf(msg, len, "wrote element %zu of the %s, an input", i, name);
      return msg;
    }
  return "";
}

/* The peak loop: run_peak's work, and run_conv's clock probe (timing.h). */
struct peak_ctx {
  long iters;
  volatile double sink;
};
static void peak_call(void *p) {
  struct peak_ctx *c = p;
  c->sink = c->sink + ct_peak(c->iters, ct_peak_seed);
}

static int run_conv(int argc, char **argv) {
  if (!ct_conv_pack || !&ct_conv_packed_floats) {
    report("error", "built without a convolution (-D<name>=ct_conv_entry, _pack, _packed_floats)");
    return 2;
  }
  FILE *f = fopen(argv[0], "rb");
  char magic[8], msg[320], where[96];
  int64_t n[6]; /* input, weights, output, check points, bias, residual */
  double tol;
  long bad;
  ct_protocol p = protocol(argv + 1);
  struct peak_ctx probe = {argc > 4 ? atol(argv[4]) : 0, 0};
  if (probe.iters > 0) {
    if (!ct_peak) {
      report("error", "PROBE_ITERS given, but built without ct_peak");
      return 2;
    }
    p.probe = peak_call;
    p.probe_ctx = &probe;
  }
  if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "CTPROB3", 8) != 0 || fread(n, 8, 6, f) != 6 ||
      fread(&tol, 8, 1, f) != 1) {
    snprintf(msg, sizeof msg, "cannot read %s", argv[0]);
    report("error", msg);
    return 2;
  }
  if (n[4] ? !ct_conv_entry_epilogue : !ct_conv_entry) {
    report("error", n[4] ? "the problem has an epilogue, the convolution has not (-D<name>=ct_conv_entry_epilogue)"
                         : "the problem has no epilogue, the convolution has one (-D<name>=ct_conv_entry)");
    return 2;
  }
  const size_t np = (size_t)ct_conv_packed_floats;
  float *in = guarded_floats((size_t)n[0], 1), *in_low = guarded_floats((size_t)n[0], 0),
        *kcrs = xmalloc(sizeof(float) * (size_t)n[1]), *w = with_guards(np), *out = with_guards((size_t)n[2]);
  struct operand bias, res;
  int64_t *idx = xmalloc(sizeof(int64_t) * (size_t)n[3]);
  double *val = xmalloc(sizeof(double) * (size_t)n[3]);
  if (fread(in, 4, (size_t)n[0], f) != (size_t)n[0] || fread(kcrs, 4, (size_t)n[1], f) != (size_t)n[1] ||
      !read_operand(f, &bias, n[4]) || !read_operand(f, &res, n[5]) ||
      fread(idx, 8, (size_t)n[3], f) != (size_t)n[3] || fread(val, 8, (size_t)n[3], f) != (size_t)n[3]) {
    snprintf(msg, sizeof msg, "%s is truncated", argv[0]);
    report("error", msg);
    return 2;
  }
  fclose(f);
  memcpy(in_low, in, sizeof(float) * (size_t)n[0]);
  ct_conv_pack(kcrs, w);
  if (*guard_damage(w, np, where, sizeof where)) {
    snprintf(msg, sizeof msg, "the packing function wrote %s of the packed weights (%zu floats)", where, np);
    report("wrong_result", msg);
    return 0;
  }
  /* The kernel overwrites its output: start from NaN so a skipped element
     shows. Once with the input's (bias's, residual's) last byte before an
     inaccessible page, once with its first byte after one. */
  for (int pass = 0; pass < 2; ++pass) {
    struct conv_ctx c = {pass ? in_low : in, w, pass ? bias.low : bias.high, pass ? res.low : res.high, out};
    for (int64_t i = 0; i < n[2]; ++i) out[i] = NAN;
    conv_call(&c);
    if (*guard_damage(out, (size_t)n[2], where, sizeof where)) {
      snprintf(msg, sizeof msg, "wrote %s of the output (%lld floats)", where, (long long)n[2]);
      report("wrong_result", msg);
      return 0;
    }
    if (*operand_damage(&bias, "bias", msg, sizeof msg) || *operand_damage(&res, "residual", msg, sizeof msg)) {
      report("wrong_result", msg);
      return 0;
    }
    bad = ct_check_points(out, idx, val, (long)n[3], tol, NULL);
    if (bad >= 0) {
      snprintf(msg, sizeof msg, "output element %lld differs from the reference by %.3g (tolerance %.3g)",
               (long long)idx[bad], absd((double)out[idx[bad]] - val[bad]), tol);
      report("wrong_result", msg);
      return 0;
    }
  }
  printf("{\"event\":\"verified\"}\n");
  fflush(stdout);
  struct counters cnt;
  counters_open(&cnt);
  ct_clock clock = make_clock(&cnt);
  struct conv_ctx c = {in_low, w, bias.low, res.low, out};
  ct_timing t;
  t.samples_s = xmalloc(sizeof(double) * (size_t)p.repeat);
  t.probe_s = p.probe ? xmalloc(sizeof(double) * (size_t)p.repeat) : NULL;
  ct_time_calls(conv_call, &c, &p, &clock, &t);
  printf("{\"status\":\"ok\",\"median_s\":%.9g,\"samples\":[", t.median_s);
  for (int i = 0; i < t.n_samples; ++i) printf("%s%.9g", i ? "," : "", t.samples_s[i]);
  if (t.probe_s) {
    printf("],\"probe_s\":[");
    for (int i = 0; i < t.n_samples; ++i) printf("%s%.9g", i ? "," : "", t.probe_s[i]);
  }
  printf("],\"calls_per_sample\":%lld,\"counters\":[", (long long)t.calls_per_sample);
  for (int i = 0; i < t.n_counters; ++i) printf("%s%lld", i ? "," : "", t.counters[i]);
  printf("],\"counter_names\":");
  json_string(cnt.names);
  printf("}\n");
  return 0;
}

/* ---- ukernels: checked against the contract's reference (reference.c) ---- */
enum { K = CT_K, C = CT_C, W = CT_W, H = CT_H, R = CT_R, S = CT_S, IROW = CT_IROW, IPIX = CT_IPIX, ST = CT_ST,
       WR = CT_WR, WS = CT_WS, WC = CT_WC, WIT = CT_WIT, OROW = CT_OROW, OPIX = CT_OPIX, STW = CT_STW, DH = CT_DH,
       DW = CT_DW, DWK = CT_DWK, NPARAM = CT_NPARAM };

struct uk_ctx {
  ct_ukernel_fn fn;
  const float *in, *w;
  float *out;
  long nc;
};
static void uk_call(void *p) {
  struct uk_ctx *c = p;
  c->fn(c->in, 0, c->w, c->out, c->nc, 1);
}

static int same(const float *a, const float *b, long n, double tol) {
  for (long j = 0; j < n; ++j)
    if (!(absd((double)a[j] - (double)b[j]) <= tol)) return 0;
  return 1;
}

static int run_ukernels(int argc, char **argv) {
  long ncv = atol(argv[0]), nct = atol(argv[1]), lanes = atol(argv[5]);
  long ncm = ncv > nct ? ncv : nct;
  ct_protocol p = protocol(argv + 2);
  struct counters cnt;
  if (!ct_profile_fns) {
    report("error", "built without ct_profile_fns");
    return 2;
  }
  counters_open(&cnt);
  ct_clock clock = make_clock(&cnt);
  ct_timing t;
  t.samples_s = xmalloc(sizeof(double) * (size_t)p.repeat);
  t.probe_s = NULL;
  for (int a = 6; a + 2 + NPARAM <= argc; a += 2 + NPARAM) {
    long pos = atol(argv[a]), index = atol(argv[a + 1]), d[NPARAM];
    for (int i = 0; i < NPARAM; ++i) d[i] = atol(argv[a + 2 + i]);
    /* The last tap's pixel, then its channels: nc*size_c, or a depthwise block's K' (its c steps reread them). */
    long n_in = ((d[H] - 1) * d[ST] + (d[R] - 1) * d[DH]) * d[IROW] + ((d[W] - 1) * d[STW] + (d[S] - 1) * d[DW]) * d[IPIX] +
                (d[DWK] ? d[K] * lanes : ncm * d[C]);
    long n_w = (ncm - 1) * d[WIT] + (d[R] - 1) * d[WR] + (d[S] - 1) * d[WS] + (d[C] - 1) * d[WC] + d[K] * lanes;
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
    fn(in, 0, w, out, ncv, 0);
    ct_ref_ukernel(d, lanes, in, w, ref, ncv, 0);
    int good = same(out, ref, n_out, tol);
    fn(in, 0, w, out, ncv, 1);
    ct_ref_ukernel(d, lanes, in, w, ref, ncv, 1);
    good = good && same(out, ref, n_out, 2 * tol);
    if (!good) {
      printf("{\"pos\":%ld,\"status\":\"wrong_result\"}\n", pos);
    } else {
      struct uk_ctx c = {fn, in, w, out, nct};
      ct_time_calls(uk_call, &c, &p, &clock, &t);
      /* Counters per call: summed over the kept samples. */
      const double calls = (double)t.calls_per_sample * (double)t.n_samples;
      printf("{\"pos\":%ld,\"status\":\"ok\",\"median_s\":%.9g,\"counters\":[", pos, t.median_s);
      for (int i = 0; i < t.n_counters; ++i) printf("%s%lld", i ? "," : "", llround((double)t.counters[i] / calls));
      printf("]}\n");
    }
    fflush(stdout);
    free(in);
    free(w);
    free(out);
    free(ref);
  }
  return 0;
}

/* ---- peak ---------------------------------------------------------------- */
static int run_peak(char **argv) {
  struct peak_ctx c = {atol(argv[0]), 0};
  ct_protocol p = protocol(argv + 1);
  struct counters none = {-1, 0, 0, ""};
  ct_clock clock = make_clock(&none);
  ct_timing t;
  t.probe_s = NULL;
  if (!ct_peak) {
    report("error", "built without ct_peak");
    return 2;
  }
#ifdef CT_PAPI
  PAPI_library_init(PAPI_VER_CURRENT); /* PAPI's real-time clock, as convtune's */
#endif
  t.samples_s = xmalloc(sizeof(double) * (size_t)p.repeat);
  ct_time_calls(peak_call, &c, &p, &clock, &t);
  printf("{\"status\":\"ok\",\"median_s\":%.9g}\n", t.median_s);
  return 0;
}

/* "3" or "2,3" into a set; the number of CPUs, 0 for "-1" (no pinning), -1 when malformed. */
static int parse_cpus(const char *text, cpu_set_t *set) {
  int n = 0;
  CPU_ZERO(set);
  if (strcmp(text, "-1") == 0) return 0;
  for (const char *p = text;;) {
    char *end;
    long c = strtol(p, &end, 10);
    if (end == p || c < 0 || c >= CPU_SETSIZE) return -1;
    CPU_SET((int)c, set);
    ++n;
    if (*end == '\0') return n;
    if (*end != ',') return -1;
    p = end + 1;
  }
}

int main(int argc, char **argv) {
  int rc = 2;
  cpu_set_t set;
  const int ncpu = parse_cpus(argc > 1 ? argv[1] : "-1", &set);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* a crashing candidate leaves no core file (nor qemu's) */
  /* A convtune killed with SIGKILL takes a hanging candidate with it. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (ncpu < 0) {
    report("error", "the CPU argument is not -1 or a list of CPU numbers");
    return 2;
  }
  /* After the re-execution below the process already runs inside the set,
     and libgomp has bound this thread to its first place: keep that. */
  const int restarted = ncpu > 1 && getenv("CT_DRIVER_PINNED") != NULL;
  if (ncpu > 0 && !restarted) {
    /* Natively the pin must hold; qemu-user may refuse it, and timings mean nothing there anyway. */
#ifndef CT_EMULATED
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      char msg[96];
      snprintf(msg, sizeof msg, "cannot pin to CPU %.60s", argv[1]);
      report("error", msg);
      return 2;
    }
    /* libgomp reads its places and binding when it loads, before main: start
       again inside the set so that each OpenMP thread gets one CPU of it.
       Should the exec fail, the threads still stay inside the set. */
    if (ncpu > 1) {
      setenv("CT_DRIVER_PINNED", "1", 1);
      setenv("OMP_PROC_BIND", "close", 1);
      setenv("OMP_PLACES", "threads", 1);
      execv("/proc/self/exe", argv);
    }
#else
    (void)sched_setaffinity(0, sizeof set, &set);
#endif
  }
  if (argc >= 7 && strcmp(argv[2], "conv") == 0) rc = run_conv(argc - 3, argv + 3);
  else if (argc >= 9 && strcmp(argv[2], "ukernels") == 0) rc = run_ukernels(argc - 3, argv + 3);
  else if (argc >= 7 && strcmp(argv[2], "peak") == 0) rc = run_peak(argv + 3);
  else report("error", "usage: driver CPU conv|ukernels|peak ARGS (see microkernels/driver.c)");
  fflush(stdout);
  return rc;
}
