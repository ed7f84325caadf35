#include "convtune/execution/output_check.h"

#include <fmt/format.h>

#include "check.h"

namespace convtune {

std::string check_output(const ProblemData& p, const float* out, const std::string& who,
                         const std::string& fix, double* max_error) {
  const long found = ct_check_points(out, p.check_index.data(), p.check_value.data(),
                                     long(p.check_index.size()), p.tolerance, max_error);
  if (found < 0) return "";
  const size_t bad = size_t(found);
  const Shape& s = p.shape;
  int64_t idx = p.check_index[bad], k = idx % s.K, rest = idx / s.K;
  int64_t w = rest % s.Wo(), h = rest / s.Wo() % s.Ho(), n = rest / s.Wo() / s.Ho();
  double got = out[idx];
  return fmt::format("{} disagrees with the reference at output (n={},h={},w={},k={}): {:.6g} instead of {:.6g} "
                     "(tolerance {:.3g}); {}",
                     who, n, h, w, k, got, p.check_value[bad], p.tolerance, fix);
}

}  // namespace convtune
