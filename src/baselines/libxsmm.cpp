// LIBXSMM's direct convolution (Debian libxsmm-dev 1.17, its libxsmm_dnn API)
// for `convtune bench`: activations NHWC in and out, weights copied once from
// KCRS into LIBXSMM's own blocked filter layout (outside the timing), run on
// `threads` OpenMP threads, each calling execute_st with its thread id. Its
// descriptor (libxsmm_dnn_conv_desc) has per-axis strides (u, v) and one pad
// per axis (pad_h, pad_w): unequal pads on the two sides of an axis are the
// input zero-padded here and given as a larger input without padding. It has
// no dilation and no groups: such shapes are left out (make_libxsmm).
#include <omp.h>

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <libxsmm.h>

#include "convtune/baselines/baseline.h"
#include "convtune/core/error.h"

namespace convtune {

namespace {

class LibxsmmConv : public Baseline {
 public:
  LibxsmmConv(const ProblemData& p, int threads) : s_(p.shape), threads_(threads), input_(p.input.data()) {
    try {
      prepare(p);
    } catch (...) {
      release();
      throw;
    }
  }
  ~LibxsmmConv() override { release(); }

  std::string impl() const override {
    return fmt::format("LIBXSMM {} dnn conv direct, NHWC, {}{} ({} thread{})", LIBXSMM_CONFIG_VERSION,
                       libxsmm_get_target_arch(), fallback_ ? ", fallback code" : "", threads_,
                       threads_ == 1 ? "" : "s");
  }

  // With padding, the padded input copy is timed (inside run()): LIBXSMM
  // needs the input zero-padded in memory (pad_h_in = pad_h), while every
  // implementation is handed the same unpadded NHWC input and reads it as part
  // of its call. Without padding the input was copied once in prepare().
  void run() override {
    const int64_t H = s_.H, W = s_.W, C = s_.C, Hp = s_.Hp(), Wp = s_.Wp(), top = s_.pad_t, left = s_.pad_l;
    const int64_t rows = padded() ? s_.N * H : 0;
    int team = 0;
    libxsmm_dnn_err_t st = LIBXSMM_DNN_SUCCESS;
#pragma omp parallel num_threads(threads_)
    {
      const int tid = omp_get_thread_num(), n = omp_get_num_threads();
      for (int64_t row = tid; row < rows; row += n)  // one input row (W x C floats) at a time
        std::memcpy(in_ + ((row / H * Hp + row % H + top) * Wp + left) * C, input_ + row * W * C,
                    size_t(W * C) * sizeof(float));
#pragma omp barrier
      const libxsmm_dnn_err_t e = libxsmm_dnn_execute_st(handle_, LIBXSMM_DNN_COMPUTE_KIND_FWD, 0, tid);
      if (tid == 0) team = n;
      if (e != LIBXSMM_DNN_SUCCESS) {
#pragma omp critical
        st = e;
      }
    }
    // Each thread id computes its share of the layer: a smaller team leaves some undone.
    if (team != threads_)
      throw Error(fmt::format("LIBXSMM ran on {} OpenMP threads instead of {}; unset OMP_THREAD_LIMIT", team,
                              threads_));
    check("libxsmm_dnn_execute_st", st);
  }

  std::vector<float> output() override { return std::vector<float>(out_, out_ + s_.N * s_.Ho() * s_.Wo() * s_.K); }

 private:
  bool padded() const { return s_.pad_t > 0 || s_.pad_l > 0 || s_.pad_b > 0 || s_.pad_r > 0; }

  // The layer, its bound buffers and the reordered weights (outside the timing).
  void prepare(const ProblemData& p) {
    init_keeping_environment();
    libxsmm_dnn_conv_desc d{};
    d.N = int(s_.N), d.C = int(s_.C), d.H = int(s_.H), d.W = int(s_.W), d.K = int(s_.K), d.R = int(s_.R);
    d.S = int(s_.S), d.u = int(s_.stride_h), d.v = int(s_.stride_w);
    if (s_.pad_t == s_.pad_b && s_.pad_l == s_.pad_r) {
      d.pad_h = d.pad_h_in = int(s_.pad_t);  // its direct convolution reads a zero-padded input buffer
      d.pad_w = d.pad_w_in = int(s_.pad_l);
    } else {  // the padded input as the whole input: the same Ho x Wo outputs from the same buffer
      d.H = int(s_.Hp()), d.W = int(s_.Wp());
    }
    d.threads = threads_;
    d.datatype_in = d.datatype_out = LIBXSMM_DNN_DATATYPE_F32;
    d.buffer_format = LIBXSMM_DNN_TENSOR_FORMAT_NHWC;
    d.filter_format = LIBXSMM_DNN_TENSOR_FORMAT_LIBXSMM;
    d.algo = LIBXSMM_DNN_CONV_ALGO_DIRECT;
    d.options = LIBXSMM_DNN_CONV_OPTION_OVERWRITE;  // output = conv, not output += conv
    d.fuse_ops = LIBXSMM_DNN_CONV_FUSE_NONE;
    libxsmm_dnn_err_t st = LIBXSMM_DNN_SUCCESS;
    handle_ = libxsmm_dnn_create_conv_layer(d, &st);
    if (!handle_) fail("libxsmm_dnn_create_conv_layer", st);
    fallback_ = st == LIBXSMM_DNN_WARN_FALLBACK;
    if (st != LIBXSMM_DNN_SUCCESS && !fallback_) fail("libxsmm_dnn_create_conv_layer", st);

    const size_t floats = size_t(s_.N * s_.Hp() * s_.Wp() * s_.C);
    in_ = bind(LIBXSMM_DNN_REGULAR_INPUT, floats);
    if (padded())
      std::memset(in_, 0, floats * sizeof(float));  // the borders stay zero; run() fills the interior
    else
      std::memcpy(in_, input_, floats * sizeof(float));  // the same layout: no copy per call
    out_ = bind(LIBXSMM_DNN_REGULAR_OUTPUT, p.output_size());
    bind(LIBXSMM_DNN_REGULAR_FILTER, p.weights.size());  // filled by LIBXSMM's own reorder from KCRS:
    check("libxsmm_dnn_copyin_tensor (KCRS weights)",
          libxsmm_dnn_copyin_tensor(tensors_.back(), p.weights.data(), LIBXSMM_DNN_TENSOR_FORMAT_KCRS));
    const size_t scratch = libxsmm_dnn_get_scratch_size(handle_, LIBXSMM_DNN_COMPUTE_KIND_FWD, &st);
    check("libxsmm_dnn_get_scratch_size", st);
    if (scratch > 0) {
      scratch_ = libxsmm_aligned_malloc(scratch, 2 << 20);
      check("libxsmm_dnn_bind_scratch", libxsmm_dnn_bind_scratch(handle_, LIBXSMM_DNN_COMPUTE_KIND_FWD, scratch_));
    }
  }


  // libxsmm_init() puts OMP_PROC_BIND=TRUE into the environment when no
  // affinity variable is set (LIBXSMM 1.17, libxsmm_main.c): every process
  // bench starts afterwards (the tune's runners, oneDNN's child) would bind
  // its OpenMP threads, and a later --threads 2 finds one CPU. Taken back out.
  static void init_keeping_environment() {
    const bool had_bind = std::getenv("OMP_PROC_BIND") != nullptr;
    libxsmm_init();
    if (!had_bind) unsetenv("OMP_PROC_BIND");
  }

  void release() {
    if (scratch_) {
      libxsmm_dnn_release_scratch(handle_, LIBXSMM_DNN_COMPUTE_KIND_FWD);
      libxsmm_free(scratch_);
    }
    for (auto type : {LIBXSMM_DNN_REGULAR_INPUT, LIBXSMM_DNN_REGULAR_OUTPUT, LIBXSMM_DNN_REGULAR_FILTER})
      if (handle_) libxsmm_dnn_release_tensor(handle_, type);
    for (libxsmm_dnn_tensor* t : tensors_) libxsmm_dnn_destroy_tensor(t);
    for (void* b : buffers_) libxsmm_free(b);
    if (handle_) libxsmm_dnn_destroy_conv_layer(handle_);
  }

  [[noreturn]] void fail(const char* call, libxsmm_dnn_err_t st) const {
    throw Error(fmt::format("LIBXSMM cannot run a direct f32 convolution of {}: {}: {}; report the shape",
                            s_.to_string(), call, libxsmm_dnn_get_error(st)));
  }
  void check(const char* call, libxsmm_dnn_err_t st) const {
    if (st != LIBXSMM_DNN_SUCCESS) fail(call, st);
  }

  // An aligned buffer of `floats` in the layout the layer wants for `type`, bound to it.
  float* bind(libxsmm_dnn_tensor_type type, size_t floats) {
    libxsmm_dnn_err_t st = LIBXSMM_DNN_SUCCESS;
    libxsmm_dnn_tensor_datalayout* layout = libxsmm_dnn_create_tensor_datalayout(handle_, type, &st);
    check("libxsmm_dnn_create_tensor_datalayout", st);
    size_t want = 1;
    for (unsigned i = 0; i < layout->num_dims; ++i) want *= layout->dim_size[i];
    if (want != floats) {
      libxsmm_dnn_destroy_tensor_datalayout(layout);
      throw Error(fmt::format("LIBXSMM wants {} floats where {} were expected for {}; report the shape", want, floats,
                              s_.to_string()));
    }
    auto* data = static_cast<float*>(libxsmm_aligned_malloc(floats * sizeof(float), 64));
    buffers_.push_back(data);
    libxsmm_dnn_tensor* t = libxsmm_dnn_link_tensor(layout, data, &st);
    libxsmm_dnn_destroy_tensor_datalayout(layout);
    check("libxsmm_dnn_link_tensor", st);
    tensors_.push_back(t);
    check("libxsmm_dnn_bind_tensor", libxsmm_dnn_bind_tensor(handle_, t, type));
    return data;
  }

  Shape s_;
  int threads_;
  const float* input_;
  bool fallback_ = false;
  libxsmm_dnn_layer* handle_ = nullptr;
  std::vector<libxsmm_dnn_tensor*> tensors_;
  std::vector<void*> buffers_;
  void* scratch_ = nullptr;
  float *in_ = nullptr, *out_ = nullptr;
};

}  // namespace

std::unique_ptr<Baseline> make_libxsmm(const ProblemData& p, std::string* missing, int threads) {
  if (p.epilogue != Epilogue::none) {  // libxsmm_dnn_conv_fuse_op has only LIBXSMM_DNN_CONV_FUSE_NONE
    *missing = fmt::format("LIBXSMM 1.17's convolution fuses no bias or activation; it is left out for --epilogue {}",
                           to_string(p.epilogue));
    return nullptr;
  }
  const Shape& s = p.shape;
  if (s.groups > 1 || s.dil_h > 1 || s.dil_w > 1) {  // libxsmm_dnn_conv_desc has neither
    *missing = fmt::format("LIBXSMM 1.17's convolution has no {}; it is left out for {}",
                           s.groups > 1 ? "groups" : "dilation", s.to_string());
    return nullptr;
  }
  return std::make_unique<LibxsmmConv>(p, threads);
}

}  // namespace convtune
