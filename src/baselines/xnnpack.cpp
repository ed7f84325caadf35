// XNNPACK's NHWC f32 convolution (Debian libxnnpack-dev) for `convtune bench`.
// It reads the unpadded NHWC input itself (padding given to the operator) and
// wants weights as OHWI per group, [K][R][S][C/groups] (xnnpack.h: kernel
// [groups][group_output_channels][R][S][group_input_channels]): reordered
// here, outside the timing. Groups, dilation, per-axis strides and per-side
// pads go to the operator as they are.
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include "convtune/baselines/baseline.h"
#include "convtune/core/error.h"

namespace convtune {

namespace {

// One pthreadpool per thread count for every operator alive, as a framework
// shares one among a network's operators: a pool per operator would leave
// the previous layer's workers spin-waiting on the cores the next one needs
// (bench --library runs the layers in sequence).
std::shared_ptr<pthreadpool> shared_pool(int threads) {
  static std::mutex mu;
  static std::map<int, std::weak_ptr<pthreadpool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<pthreadpool> pool = pools[threads].lock();
  if (!pool) {
    pool = std::shared_ptr<pthreadpool>(pthreadpool_create(size_t(threads)), [](pthreadpool_t p) {
      if (p) pthreadpool_destroy(p);
    });
    pools[threads] = pool;
  }
  return pool;
}

class XnnpackConv : public Baseline {
 public:
  XnnpackConv(const ProblemData& p, int threads) {
    const Shape& s = p.shape;
    if (xnn_initialize(nullptr) != xnn_status_success) throw Error("XNNPACK: xnn_initialize failed (CPU not supported?)");
    const int64_t Cg = s.Cg();
    std::vector<float> ohwi(size_t(s.K * s.R * s.S * Cg));
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < s.R; ++r)
          for (int64_t q = 0; q < s.S; ++q)
            ohwi[size_t(((k * s.R + r) * s.S + q) * Cg + c)] = p.weights[size_t(((k * Cg + c) * s.R + r) * s.S + q)];
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (p.epilogue == Epilogue::bias_relu) lo = 0;
    if (p.epilogue == Epilogue::bias_relu6) lo = 0, hi = 6;
    // Pads in XNNPACK's order: top, right, bottom, left.
    if (xnn_create_convolution2d_nhwc_f32(uint32_t(s.pad_t), uint32_t(s.pad_r), uint32_t(s.pad_b), uint32_t(s.pad_l),
                                          uint32_t(s.R), uint32_t(s.S), uint32_t(s.stride_h), uint32_t(s.stride_w),
                                          uint32_t(s.dil_h), uint32_t(s.dil_w), uint32_t(s.groups), size_t(Cg),
                                          size_t(s.Kg()), size_t(s.C), size_t(s.K), ohwi.data(),
                                          has_bias(p.epilogue) ? p.bias.data() : nullptr, lo, hi, 0,
                                          &op_) != xnn_status_success)
      throw Error(fmt::format("XNNPACK refused the shape {}", s.to_string()));
    if (threads > 1) pool_ = shared_pool(threads);
    out_.assign(size_t(s.N * s.Ho() * s.Wo() * s.K), 0.f);
    if (xnn_setup_convolution2d_nhwc_f32(op_, size_t(s.N), size_t(s.H), size_t(s.W), p.input.data(), out_.data(),
                                         pool_.get()) != xnn_status_success)
      throw Error(fmt::format("XNNPACK could not set up the shape {}", s.to_string()));
    threads_ = pool_ ? int(pthreadpool_get_threads_count(pool_.get())) : 1;
  }
  ~XnnpackConv() override {
    if (op_) xnn_delete_operator(op_);
  }
  std::string impl() const override {
    return fmt::format("XNNPACK nhwc_f32 ({} thread{})", threads_, threads_ == 1 ? "" : "s");
  }
  void run() override { xnn_run_operator(op_, pool_.get()); }
  std::vector<float> output() override { return out_; }

 private:
  xnn_operator_t op_ = nullptr;
  std::shared_ptr<pthreadpool> pool_;  // shared_pool(threads); none for one thread
  int threads_ = 1;
  std::vector<float> out_;
};

}  // namespace

std::unique_ptr<Baseline> make_xnnpack(const ProblemData& p, std::string* missing, int threads) {
  if (has_residual(p.epilogue)) {  // its convolution has no residual input; an extra pass would not be fused
    *missing = "XNNPACK's convolution has no residual add; it is left out for --epilogue bias,add";
    return nullptr;
  }
  return std::make_unique<XnnpackConv>(p, threads);
}

}  // namespace convtune
