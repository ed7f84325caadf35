#pragma once
// Divisors and prime factors of loop counts: the space's tile and thread
// choices (space.cpp), CSA's largest fitting tile (csa.cpp) and the
// coordinate view's prime slots (coordinates.cpp). One definition each.
#include <cstdint>
#include <vector>

namespace convtune {

/// Divisors of n >= 1, ascending (1 first, n last).
std::vector<int64_t> divisors(int64_t n);

/// Prime factors of n with multiplicity, ascending (none for n <= 1).
std::vector<int64_t> prime_factors(int64_t n);

}  // namespace convtune
