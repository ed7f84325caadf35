/* The prototype against convtune's delivered resnet18-1 kernel (direct), in
   one process on one CPU: every output element checked against a double
   reference, 64 guard floats on each side of the output, then 15 interleaved
   rounds of >= 100 ms each; the ratio is the median of the rounds' own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "r18.h"  /* convtune export of the delivered kernel (run.sh) */
void proto_pack(const float *kcrs, float *U);
void proto(const float *in, const float *U, float *out, float *scratch);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static float *al(size_t n) { void *p = 0; if (posix_memalign(&p, 64, n * 4)) exit(1); return p; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
enum { H = 224, C = 3, K = 64, HO = 112, GUARD = 64, ROUNDS = 15 };
static double per_call(void (*f)(void *), void *ctx) {
  int n = 0; const double t0 = now();
  do { f(ctx); ++n; } while (now() - t0 < 0.1);
  return (now() - t0) / n;
}
struct ctx { float *in, *pk, *U, *scr, *o1, *o2; };
static void run_direct(void *p) { struct ctx *c = p; r18_resnet18_1(c->in, c->pk, c->o1); }
static void run_proto(void *p) { struct ctx *c = p; proto(c->in, c->U, c->o2, c->scr); }
int main(void) {
  const long NO = (long)HO * HO * K;
  float *in = al(H * H * C), *w = al(K * C * 49), *pk = al(r18_resnet18_1_packed_floats), *U = al(4 * 4800),
        *scr = al(224 * 12 * 80 + 4 * 4800), *o1 = al(NO), *ob = al(NO + 2 * GUARD), *o2 = ob + GUARD;
  srand(1);
  for (long i = 0; i < H * H * C; ++i) in[i] = rand() / (float)RAND_MAX - 0.5f;
  for (long i = 0; i < K * C * 49; ++i) w[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (long i = 0; i < NO + 2 * GUARD; ++i) ob[i] = 12345.0f;
  r18_resnet18_1_pack(w, pk);
  proto_pack(w, U);
  struct ctx c = {in, pk, U, scr, o1, o2};
  run_direct(&c); run_proto(&c);
  double e1 = 0, e2 = 0; long bad = 0;
  for (int y = 0; y < HO; ++y) for (int x = 0; x < HO; ++x) for (int k = 0; k < K; ++k) {
    double s = 0;
    for (int ch = 0; ch < C; ++ch) for (int r = 0; r < 7; ++r) for (int q = 0; q < 7; ++q) {
      const int iy = 2 * y - 3 + r, ix = 2 * x - 3 + q;
      if (iy >= 0 && iy < H && ix >= 0 && ix < H) s += (double)in[(iy * H + ix) * C + ch] * w[((k * C + ch) * 7 + r) * 7 + q];
    }
    const long i = ((long)y * HO + x) * K + k;
    e1 = fmax(e1, fabs(o1[i] - s)); e2 = fmax(e2, fabs(o2[i] - s));
    bad += !(fabs(o2[i] - s) <= 1e-5 + 1e-4 * fabs(s));
  }
  for (int i = 0; i < GUARD; ++i) bad += (ob[i] != 12345.0f) + (ob[GUARD + NO + i] != 12345.0f);
  printf("check: max |error| direct %.2e, prototype %.2e; %ld elements or guards wrong\n", e1, e2, bad);
  if (bad) return 1;
  double td[ROUNDS], tp[ROUNDS], rr[ROUNDS];
  for (int r = 0; r < ROUNDS; ++r) { td[r] = per_call(run_direct, &c); tp[r] = per_call(run_proto, &c); rr[r] = td[r] / tp[r]; }
  qsort(td, ROUNDS, sizeof(double), cmp); qsort(tp, ROUNDS, sizeof(double), cmp); qsort(rr, ROUNDS, sizeof(double), cmp);
  printf("direct %.3f ms, prototype %.3f ms (medians); direct/prototype %.3f (rounds %.3f-%.3f)\n", td[ROUNDS / 2] * 1e3,
         tp[ROUNDS / 2] * 1e3, rr[ROUNDS / 2], rr[0], rr[ROUNDS - 1]);
  return 0;
}
