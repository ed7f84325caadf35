// Welch's two-sample t-test for Droplet's move rule (003 §3.3), with the
// Student-t distribution through the regularised incomplete beta function.
#include <cmath>
#include <vector>

#include "convtune/search/search.h"

namespace convtune {

namespace {

// Numerical Recipes' continued fraction for I_x(a, b) (modified Lentz).
double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 1000; ++m) {
    for (int pass = 0; pass < 2; ++pass) {
      const double aa = pass == 0 ? m * (b - m) * x / ((a - 1 + 2 * m) * (a + 2 * m))
                                  : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1 + 2 * m));
      d = 1 + aa * d;
      d = 1 / (std::abs(d) < tiny ? tiny : d);
      c = 1 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      h *= d * c;
      if (pass == 1 && std::abs(d * c - 1) < eps) return h;
    }
  }
  return h;
}

double variance(const std::vector<double>& v) {  // sample variance (n - 1)
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size() - 1);
}

}  // namespace

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t > 0 ? 1 - tail : tail;
}

double welch_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return 1;
  const double va = variance(a) / double(a.size()), vb = variance(b) / double(b.size());
  const double diff = mean(a) - mean(b);
  if (va + vb == 0) return diff == 0 ? 1 : 0;
  const double t = diff / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) / (va * va / double(a.size() - 1) + vb * vb / double(b.size() - 1));
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));  // two-sided: 2 P(T > |t|)
}

}  // namespace convtune
