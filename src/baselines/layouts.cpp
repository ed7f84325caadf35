#include "convtune/baselines/layouts.h"

namespace convtune {

namespace {
size_t at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t B, int64_t C, int64_t D) {
  return size_t(((a * B + b) * C + c) * D + d);
}

// The output from one of its layouts into the other: [N][Ho][Wo][K]
// (convtune's) into [N][K][Ho][Wo] when `to_nchw`, else back.
std::vector<float> output_between(const ProblemData& p, const float* from, bool to_nchw) {
  const Shape& s = p.shape;
  const int64_t Ho = s.Ho(), Wo = s.Wo();
  std::vector<float> v(p.output_size());
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t x = 0; x < Wo; ++x) {
          const size_t nhwc = at(n, y, x, k, Ho, Wo, s.K), nchw = at(n, k, y, x, s.K, Ho, Wo);
          v[to_nchw ? nchw : nhwc] = from[to_nchw ? nhwc : nchw];
        }
  return v;
}
}  // namespace

std::vector<float> input_nchw(const ProblemData& p) {
  const Shape& s = p.shape;
  std::vector<float> v(p.input.size());
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t y = 0; y < s.H; ++y)
      for (int64_t x = 0; x < s.W; ++x)
        for (int64_t c = 0; c < s.C; ++c) v[at(n, c, y, x, s.C, s.H, s.W)] = p.input[at(n, y, x, c, s.H, s.W, s.C)];
  return v;
}

std::vector<float> output_from_nchw(const ProblemData& p, const float* out) { return output_between(p, out, false); }

std::vector<float> output_to_nchw(const ProblemData& p, const float* nhwc) { return output_between(p, nhwc, true); }

}  // namespace convtune
