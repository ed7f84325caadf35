// The Caffe baseline as the anchors were measured: im2col into a
// [C*R*S][Ho*Wo] buffer, then cblas_sgemm (K x Ho*Wo x C*R*S) on the
// requested number of OpenBLAS threads (one unless --threads), per image;
// im2col is skipped for 1x1, stride 1, pad 0. With groups, as Caffe's
// ConvolutionLayer does it: per image and group, im2col of the group's C/groups
// channels and a (K/groups) x Ho*Wo x (C/groups)*R*S GEMM. Dilation, per-axis
// strides and per-side pads are im2col's geometry. Inputs are NCHW and
// weights [K][C/groups][R][S] (each group's rows of the GEMM), converted here
// outside the timing. OpenBLAS starts its worker threads
// when it loads, so they are not confined to bench's CPUs the way oneDNN's
// (OpenMP, started by the pinned thread) are. An epilogue is a plain loop
// over each image's output after its GEMM, inside the timed call.
#include <cblas.h>

#include <algorithm>
#include <cstring>

#include "convtune/baselines/baseline.h"
#include "convtune/baselines/layouts.h"

namespace convtune {

namespace {

class Im2colBlas : public Baseline {
 public:
  Im2colBlas(const ProblemData& p, int threads) : p_(p) {
    openblas_set_num_threads(threads);
    const Shape& s = p.shape;
    in_ = input_nchw(p);
    w_ = p.weights;  // [K][C/groups][R][S]: group g's [K/groups][C/groups*R*S] matrix from row g*K/groups
    out_.assign(size_t(s.N * s.K * s.Ho() * s.Wo()), 0.f);
    direct_ = s.R == 1 && s.S == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_t == 0 && s.pad_l == 0 &&
              s.pad_b == 0 && s.pad_r == 0;
    if (!direct_) col_.assign(size_t(s.Cg() * s.R * s.S * s.Ho() * s.Wo()), 0.f);
    if (has_residual(p.epilogue)) res_ = output_to_nchw(p, p.residual.data());
  }

  std::string impl() const override {
    const char* core = openblas_get_corename();
    return std::string("OpenBLAS ") + (core ? core : "?");
  }

  void run() override {
    const Shape& s = p_.shape;
    const int64_t hw = s.Ho() * s.Wo(), Kg = s.Kg(), Cg = s.Cg(), crs = Cg * s.R * s.S;
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        const float* img = &in_[size_t((n * s.C + g * Cg) * s.H * s.W)];  // the group's C/groups channels
        const float* col = img;
        if (!direct_) {
          im2col(img);
          col = col_.data();
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(Kg), int(hw), int(crs), 1.f,
                    &w_[size_t(g * Kg * crs)], int(crs), col, int(hw), 0.f, &out_[size_t((n * s.K + g * Kg) * hw)],
                    int(hw));
      }
      if (p_.epilogue != Epilogue::none) epilogue(n);
    }
  }

  std::vector<float> output() override { return output_from_nchw(p_, out_.data()); }

 private:
  // One group's C/groups channels of an image (all of them without groups).
  void im2col(const float* img) {
    const Shape& s = p_.shape;
    const int64_t Ho = s.Ho(), Wo = s.Wo();
    float* col = col_.data();
    for (int64_t c = 0; c < s.Cg(); ++c)
      for (int64_t r = 0; r < s.R; ++r)
        for (int64_t q = 0; q < s.S; ++q)
          for (int64_t oh = 0; oh < Ho; ++oh) {
            const int64_t ih = oh * s.stride_h - s.pad_t + r * s.dil_h;
            if (ih < 0 || ih >= s.H) {
              std::memset(col, 0, size_t(Wo) * sizeof(float));
              col += Wo;
              continue;
            }
            const float* row = img + (c * s.H + ih) * s.W;
            for (int64_t ow = 0; ow < Wo; ++ow) {
              const int64_t iw = ow * s.stride_w - s.pad_l + q * s.dil_w;
              *col++ = iw >= 0 && iw < s.W ? row[iw] : 0.f;
            }
          }
  }

  // Image n's [K][Ho*Wo] output, one channel (one bias) at a time.
  void epilogue(int64_t n) {
    const Shape& s = p_.shape;
    const int64_t hw = s.Ho() * s.Wo();
    const Epilogue e = p_.epilogue;
    for (int64_t k = 0; k < s.K; ++k) {
      float* o = &out_[size_t((n * s.K + k) * hw)];
      const float b = p_.bias[size_t(k)];
      if (e == Epilogue::bias_add) {
        const float* q = &res_[size_t((n * s.K + k) * hw)];
        for (int64_t i = 0; i < hw; ++i) o[i] = o[i] + b + q[i];
      } else if (e == Epilogue::bias_relu) {
        for (int64_t i = 0; i < hw; ++i) o[i] = std::max(o[i] + b, 0.f);
      } else if (e == Epilogue::bias_relu6) {
        for (int64_t i = 0; i < hw; ++i) o[i] = std::min(std::max(o[i] + b, 0.f), 6.f);
      } else {
        for (int64_t i = 0; i < hw; ++i) o[i] += b;
      }
    }
  }

  const ProblemData& p_;
  std::vector<float> in_, w_, col_, out_, res_;
  bool direct_ = false;
};

}  // namespace

std::unique_ptr<Baseline> make_im2col_blas(const ProblemData& p, std::string* /*missing*/, int threads) {
  return std::make_unique<Im2colBlas>(p, threads);
}

}  // namespace convtune
