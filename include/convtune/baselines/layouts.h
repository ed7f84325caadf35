#pragma once
// Conversions between convtune's layouts (input NHWC zero-padded, weights
// RSCK with Kp columns, output NHWK with Kp columns) and the unpadded ones
// the libraries take. Used outside any timing.
#include <vector>

#include "convtune/execution/runner.h"

namespace convtune {

/// Input without its zero padding, [N][H][W][C] or [N][C][H][W].
std::vector<float> input_nhwc(const ProblemData& p);
std::vector<float> input_nchw(const ProblemData& p);
/// Weights with the real K columns only, [R][S][C][K] (oneDNN's hwio) or [K][C][R][S].
std::vector<float> weights_rsck(const ProblemData& p);
std::vector<float> weights_kcrs(const ProblemData& p);
/// An output [N][Ho][Wo][K] or [N][K][Ho][Wo] in convtune's [N][Ho][Wo][Kp].
std::vector<float> output_from_nhwc(const ProblemData& p, const float* out);
std::vector<float> output_from_nchw(const ProblemData& p, const float* out);

}  // namespace convtune
