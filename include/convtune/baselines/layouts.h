#pragma once
// Conversions between the layouts every implementation is given (input NHWC,
// weights [K][C/groups][R][S], output NHWC exactly K wide; runner.h ProblemData) and the ones
// a library wants instead. Used outside any timing.
#include <vector>

#include "convtune/execution/runner.h"

namespace convtune {

/// The input as [N][C][H][W].
std::vector<float> input_nchw(const ProblemData& p);
/// An output [N][K][Ho][Wo] as [N][Ho][Wo][K].
std::vector<float> output_from_nchw(const ProblemData& p, const float* out);
/// An output-shaped [N][Ho][Wo][K] tensor (the residual) as [N][K][Ho][Wo].
std::vector<float> output_to_nchw(const ProblemData& p, const float* nhwc);

}  // namespace convtune
