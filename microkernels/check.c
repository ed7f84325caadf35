/* The output check; see check.h. */
#include "check.h"

long ct_check_points(const float *out, const int64_t *idx, const double *val, long n, double tol,
                     double *max_error) {
  double worst = 0, worst_bad = 0;
  long bad = -1;
  for (long i = 0; i < n; ++i) {
    double err = (double)out[idx[i]] - val[i];
    if (err < 0) err = -err;
    if (err != err) err = 1.0 / 0.0; /* NaN: a skipped or garbage element */
    if (err > tol && (bad < 0 || err > worst_bad)) {
      bad = i;
      worst_bad = err;
    }
    if (err > worst) worst = err;
  }
  if (max_error) *max_error = worst;
  return bad;
}
