#pragma once
// The one output check of a convolution in this process (bench, the
// finalists' duel, the oneDNN comparison): the driver's own comparison
// (microkernels/check.c) at the problem's checked points, so that every
// implementation is judged as the candidates are.
#include <string>
#include <vector>

#include "convtune/execution/runner.h"

namespace convtune {

/// "" when `out` ([N][Ho][Wo][K], output_size() floats) matches the reference at every checked
/// point, else the one-line error naming `who`, the element and `fix`;
/// *max_error gets the largest difference.
std::string check_output(const ProblemData& p, const float* out, const std::string& who,
                         const std::string& fix, double* max_error = nullptr);
inline std::string check_output(const ProblemData& p, const std::vector<float>& out, const std::string& who,
                                const std::string& fix, double* max_error = nullptr) {
  return check_output(p, out.data(), who, fix, max_error);
}

}  // namespace convtune
