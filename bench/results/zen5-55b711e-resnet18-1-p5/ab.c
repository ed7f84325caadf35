/* A/B of two builds of the resnet18-1 kernel (function ct_conv_resnet18_1) in one process: the same
 * input, packed weights and a buffer each for the output, 20 ms samples interleaved, after checking
 * that the two agree at every output element. Stop 45 ran it on the generated kernel and on the same
 * C with every _mm512_storeu_ps(O...) made _mm512_stream_ps, plus an _mm_sfence() at the end of the
 * convolution (README.md).
 *   cc -O2 -o ab ab.c -ldl -lm && taskset -c 1 ./ab plain.so stream.so 40 20 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*conv_t)(const float *, const float *, float *);
typedef void (*pack_t)(const float *, float *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static float *random_floats(size_t n) {
  float *p = aligned_alloc(64, n * sizeof(float));
  for (size_t i = 0; i < n; ++i) p[i] = (rand() % 2000 - 1000) * 1e-3f;
  return p;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: ab A.so B.so ROUNDS SAMPLE_MS\n");
    return 2;
  }
  conv_t f[2];
  pack_t pack = NULL;
  for (int k = 0; k < 2; ++k) {
    void *h = dlopen(argv[1 + k], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    f[k] = (conv_t)dlsym(h, "ct_conv_resnet18_1");
    if (k == 0) pack = (pack_t)dlsym(h, "ct_conv_resnet18_1_pack");
  }
  const int rounds = atoi(argv[3]);
  const double ms = atof(argv[4]);
  /* N=1, K=64, C=3, H=W=224, R=S=7, stride 2, pad 3: output 112x112x64; 9408 packed floats */
  const size_t ni = 224 * 224 * 3, no = 112 * 112 * 64, nkcrs = 64 * 3 * 49;
  const double flops = 2.0 * 112 * 112 * 64 * 3 * 49;
  float *in = random_floats(ni), *kcrs = random_floats(nkcrs), *w = random_floats(nkcrs);
  float *out[2] = {random_floats(no), random_floats(no)};
  pack(kcrs, w);
  f[0](in, w, out[0]);
  f[1](in, w, out[1]);
  double max_diff = 0;
  for (size_t i = 0; i < no; ++i) max_diff = fmax(max_diff, fabs(out[0][i] - out[1][i]));
  printf("max diff %g\n", max_diff);
  double *s[2] = {malloc(sizeof(double) * rounds), malloc(sizeof(double) * rounds)};
  const int calls = ms / 1.1 < 1 ? 1 : (int)(ms / 1.1); /* about 1.1 ms a call */
  for (int r = 0; r < rounds; ++r)
    for (int j = 0; j < 2; ++j) {
      const int k = (j + r) % 2;
      f[k](in, w, out[k]); /* warm */
      const double t = now();
      for (int c = 0; c < calls; ++c) f[k](in, w, out[k]);
      s[k][r] = (now() - t) / calls;
    }
  for (int k = 0; k < 2; ++k) {
    qsort(s[k], rounds, sizeof(double), cmp);
    printf("%s: median %.1f GFLOP/s (p10 %.1f, p90 %.1f)\n", argv[1 + k], flops / s[k][rounds / 2] * 1e-9,
           flops / s[k][rounds * 9 / 10] * 1e-9, flops / s[k][rounds / 10] * 1e-9);
  }
  return 0;
}
