#include "convtune/baselines/layouts.h"

namespace convtune {

namespace {
size_t at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t B, int64_t C, int64_t D) {
  return size_t(((a * B + b) * C + c) * D + d);
}
}  // namespace

std::vector<float> input_nhwc(const ProblemData& p) {
  const Shape& s = p.shape;
  std::vector<float> v(size_t(s.N * s.H * s.W * s.C));
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t y = 0; y < s.H; ++y)
      for (int64_t x = 0; x < s.W; ++x)
        for (int64_t c = 0; c < s.C; ++c)
          v[at(n, y, x, c, s.H, s.W, s.C)] = p.input[at(n, y + s.pad, x + s.pad, c, s.Hp(), s.Wp(), s.C)];
  return v;
}

std::vector<float> input_nchw(const ProblemData& p) {
  const Shape& s = p.shape;
  std::vector<float> v(size_t(s.N * s.C * s.H * s.W));
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t y = 0; y < s.H; ++y)
      for (int64_t x = 0; x < s.W; ++x)
        for (int64_t c = 0; c < s.C; ++c)
          v[at(n, c, y, x, s.C, s.H, s.W)] = p.input[at(n, y + s.pad, x + s.pad, c, s.Hp(), s.Wp(), s.C)];
  return v;
}

std::vector<float> weights_rsck(const ProblemData& p) {
  const Shape& s = p.shape;
  std::vector<float> v(size_t(s.R * s.S * s.C * s.K));
  for (int64_t i = 0; i < s.R * s.S * s.C; ++i)
    for (int64_t k = 0; k < s.K; ++k) v[size_t(i * s.K + k)] = p.weights[size_t(i * p.Kp + k)];
  return v;
}

std::vector<float> weights_kcrs(const ProblemData& p) {
  const Shape& s = p.shape;
  std::vector<float> v(size_t(s.K * s.C * s.R * s.S));
  for (int64_t r = 0; r < s.R; ++r)
    for (int64_t q = 0; q < s.S; ++q)
      for (int64_t c = 0; c < s.C; ++c)
        for (int64_t k = 0; k < s.K; ++k)
          v[at(k, c, r, q, s.C, s.R, s.S)] = p.weights[at(r, q, c, k, s.S, s.C, p.Kp)];
  return v;
}

std::vector<float> output_from_nhwc(const ProblemData& p, const float* out) {
  const Shape& s = p.shape;
  const int64_t pixels = s.N * s.Ho() * s.Wo();
  std::vector<float> v(p.output_size(), 0.f);
  for (int64_t i = 0; i < pixels; ++i)
    for (int64_t k = 0; k < s.K; ++k) v[size_t(i * p.Kp + k)] = out[i * s.K + k];
  return v;
}

std::vector<float> output_from_nchw(const ProblemData& p, const float* out) {
  const Shape& s = p.shape;
  const int64_t Ho = s.Ho(), Wo = s.Wo();
  std::vector<float> v(p.output_size(), 0.f);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t y = 0; y < Ho; ++y)
        for (int64_t x = 0; x < Wo; ++x) v[at(n, y, x, k, Ho, Wo, p.Kp)] = out[at(n, k, y, x, s.K, Ho, Wo)];
  return v;
}

}  // namespace convtune
