#pragma once
// Library baselines for `convtune bench` (oneDNN, im2col + OpenBLAS, XNNPACK,
// LIBXSMM): each is
// prepared once from a layer's operands (layout conversions and reorders
// happen here, outside the timing), then run() is the timed call. Every shape
// parse_shape accepts is the same problem to each: per-axis strides, per-side
// pads, dilation and groups (weights [K][C/groups][R][S], runner.h), or it is
// left out with the reason.
#include <memory>
#include <string>
#include <vector>

#include "convtune/execution/runner.h"

namespace convtune {

class Baseline {
 public:
  virtual ~Baseline() = default;
  /// What the library chose: "brgconv:avx512_core", "OpenBLAS Haswell", ...
  virtual std::string impl() const = 0;
  /// One convolution (the timed call).
  virtual void run() = 0;
  /// The last run's output as [N][Ho][Wo][K] (runner.h ProblemData), for
  /// the agreement check. With the bias,add epilogue only the first run's
  /// equals the reference (oneDNN's sum post-op accumulates into its output).
  virtual std::vector<float> output() = 0;
};

/// "" when oneDNN is in this build, else what to install.
std::string onednn_missing();

/// oneDNN convolution_forward (direct, f32, format_tag::any; groups as its
/// grouped goihw weights, dilation as its dilates) on `threads`
/// OpenMP threads (omp_set_num_threads: the calling thread's setting), with
/// p.epilogue fused: bias as the convolution's bias, then an eltwise relu,
/// clip(0, 6) or sum (residual) post-op.
/// Returns nullptr and sets *missing (what to install) when oneDNN is not in
/// this build; throws Error when oneDNN rejects the shape.
std::unique_ptr<Baseline> make_onednn(const ProblemData& p, std::string* missing, int threads = 1);

/// Caffe-style im2col + cblas_sgemm on `threads` OpenBLAS threads
/// (openblas_set_num_threads; im2col skipped for 1x1, stride 1, pad 0; one
/// im2col and GEMM per group with groups), then
/// p.epilogue in a plain loop over each image's output (timed with it).
/// nullptr and *missing as above.
std::unique_ptr<Baseline> make_im2col_blas(const ProblemData& p, std::string* missing, int threads = 1);

/// XNNPACK's xnn_create_convolution2d_nhwc_f32 on a pthreadpool of `threads`
/// (1: none; one pool shared by the operators alive, as a framework shares it), weights reordered to OHWI
/// per group once, groups and dilation given to the operator; bias and the ReLU/ReLU6 clamp
/// through its bias and output range. nullptr and *missing (why) when XNNPACK
/// is not in this build or for the bias,add epilogue it cannot fuse.
std::unique_ptr<Baseline> make_xnnpack(const ProblemData& p, std::string* missing, int threads = 1);

/// LIBXSMM 1.17's direct convolution (libxsmm_dnn_create_conv_layer, NHWC
/// activations, weights copied once into its blocked layout), execute_st per
/// thread id in an OpenMP team of `threads`. With padding, run() copies the
/// input into a zero-padded buffer (timed). nullptr and *missing (why) when
/// LIBXSMM is not in this build, for any epilogue (it fuses none) or for
/// groups or dilation (its descriptor has neither); throws Error when LIBXSMM
/// rejects the shape.
std::unique_ptr<Baseline> make_libxsmm(const ProblemData& p, std::string* missing, int threads = 1);

}  // namespace convtune
