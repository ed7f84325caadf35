/* The output check, one implementation for the driver (driver.c: every
 * candidate) and convtune itself (bench's and tune's oneDNN agreement check). */
#ifndef CT_CHECK_H
#define CT_CHECK_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Compares out[idx[i]] with val[i] for i < n: returns the i of the worst
 * point farther than tol from its reference (NaN counts as infinitely far),
 * or -1 when all are within it; *max_error (when not NULL) gets the largest
 * difference over all points. */
long ct_check_points(const float *out, const int64_t *idx, const double *val, long n, double tol,
                     double *max_error);

#ifdef __cplusplus
}
#endif
#endif
