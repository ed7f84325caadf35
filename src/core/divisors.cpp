#include "convtune/core/divisors.h"

namespace convtune {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> lo, hi;  // i and n / i for i up to sqrt(n)
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      lo.push_back(i);
      if (i != n / i) hi.push_back(n / i);
    }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

std::vector<int64_t> prime_factors(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t p = 2; p * p <= n; ++p)
    for (; n % p == 0; n /= p) v.push_back(p);
  if (n > 1) v.push_back(n);
  return v;
}

}  // namespace convtune
