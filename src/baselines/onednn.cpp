// oneDNN as the anchors were measured: convolution_forward, direct algorithm,
// f32, NHWC activations, weights in the format oneDNN picks (reordered
// once here, on the requested number of OpenMP threads (one unless bench or
// tune says --threads); run() is execute + wait only. An epilogue is fused
// the way oneDNN fuses it: the bias as the convolution's bias, ReLU and ReLU6
// as eltwise relu and clip(0, 6) post-ops, the residual as a sum post-op.
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <fmt/format.h>

#include "convtune/baselines/baseline.h"
#include "convtune/core/error.h"

namespace convtune {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

class Onednn : public Baseline {
 public:
  Onednn(const ProblemData& p, int threads) : p_(p), eng_(dnnl::engine::kind::cpu, 0), strm_(eng_) {
    // oneDNN runs its parallel regions with this thread's OpenMP setting.
    omp_set_num_threads(threads);
    const Shape& s = p.shape;
    const memory::dims src{s.N, s.C, s.H, s.W}, dst{s.N, s.K, s.Ho(), s.Wo()};
    // Grouped weights as oneDNN's goihw [g][K/g][C/g][R][S]: the same bytes as
    // ONNX's [K][C/groups][R][S]. oneDNN counts dilation from 0 (dense = 0),
    // ONNX from 1; padding_l/padding_r are the top-left and bottom-right pads.
    const bool grouped = s.groups > 1;
    const memory::dims wei = grouped ? memory::dims{s.groups, s.Kg(), s.Cg(), s.R, s.S}
                                     : memory::dims{s.K, s.C, s.R, s.S};
    const tag user_wei = grouped ? tag::goihw : tag::oihw;
    const memory::dims strides{s.stride_h, s.stride_w}, dilates{s.dil_h - 1, s.dil_w - 1};
    const memory::dims pad_l{s.pad_t, s.pad_l}, pad_r{s.pad_b, s.pad_r};
    // Activations in the layout every implementation gets (NHWC in and out);
    // the weights in whatever oneDNN packs them into, reordered once here.
    auto md = [](const memory::dims& d, tag t) { return memory::desc(d, memory::data_type::f32, t); };
    auto conv_desc = [&](const memory::desc& bias) {
      return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             md(src, tag::nhwc), md(wei, tag::any), bias, md(dst, tag::nhwc), strides,
                                             dilates, pad_l, pad_r);
    };
    const Epilogue e = p.epilogue;
    dnnl::post_ops ops;
    if (e == Epilogue::bias_add) ops.append_sum(1.f);  // dst += what dst holds: the residual, placed below
    if (e == Epilogue::bias_relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    if (e == Epilogue::bias_relu6) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, 0.f, 6.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const memory::dims bias_dims{s.K};
    pd_ = dnnl::convolution_forward::primitive_desc(
        conv_desc(has_bias(e) ? md(bias_dims, tag::x) : memory::desc()), attr, eng_);
    conv_ = dnnl::convolution_forward(pd_);
    user_src_ = p.input;
    user_wei_ = p.weights;  // [K][C/groups][R][S] = oneDNN's oihw, or goihw with groups
    user_dst_.assign(p.output_size(), 0.f);
    src_ = place(memory({src, memory::data_type::f32, tag::nhwc}, eng_, user_src_.data()), pd_.src_desc());
    wei_ = place(memory({wei, memory::data_type::f32, user_wei}, eng_, user_wei_.data()), pd_.weights_desc());
    dst_ = memory(pd_.dst_desc(), eng_);
    user_dst_mem_ = memory({dst, memory::data_type::f32, tag::nhwc}, eng_, user_dst_.data());
    args_ = {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, wei_}, {DNNL_ARG_DST, dst_}};
    if (has_bias(e)) {
      user_bias_ = p.bias;
      args_[DNNL_ARG_BIAS] = memory(md(bias_dims, tag::x), eng_, user_bias_.data());
    }
    if (has_residual(e)) {
      // The sum post-op adds what dst holds: the residual before the first
      // run, whose output the agreement check reads. Later (timed) runs add
      // onto their predecessor's output instead: the same work, one read and
      // one write of dst per call, as convtune's read of the residual and
      // write of the output.
      user_res_ = p.residual;
      memory res({dst, memory::data_type::f32, tag::nhwc}, eng_, user_res_.data());
      dnnl::reorder(res, dst_).execute(strm_, res, dst_);
      strm_.wait();
    }
  }

  std::string impl() const override { return pd_.impl_info_str(); }

  void run() override {
    conv_.execute(strm_, args_);
    strm_.wait();
  }

  std::vector<float> output() override {
    if (pd_.dst_desc() != user_dst_mem_.get_desc()) {
      dnnl::reorder(dst_, user_dst_mem_).execute(strm_, dst_, user_dst_mem_);
      strm_.wait();
      return user_dst_;
    }
    const float* d = static_cast<const float*>(dst_.get_data_handle());
    return std::vector<float>(d, d + p_.output_size());
  }

 private:
  // The user buffer in the layout oneDNN chose (a reorder when they differ).
  memory place(memory user, const memory::desc& want) {
    if (user.get_desc() == want) return user;
    memory m(want, eng_);
    dnnl::reorder(user, m).execute(strm_, user, m);
    strm_.wait();
    return m;
  }

  const ProblemData& p_;
  dnnl::engine eng_;
  dnnl::stream strm_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  AlignedFloats user_src_, user_res_;  // on a cache line, as the caller's input (core/aligned.h)
  std::vector<float> user_wei_, user_dst_, user_bias_;
  memory src_, wei_, dst_, user_dst_mem_;
  std::unordered_map<int, memory> args_;
};

}  // namespace

std::string onednn_missing() { return ""; }

std::unique_ptr<Baseline> make_onednn(const ProblemData& p, std::string* /*missing*/, int threads) {
  try {
    return std::make_unique<Onednn>(p, threads);
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN cannot run a direct f32 convolution of {}: {}; report the shape", p.shape.to_string(),
                            e.what()));
  }
}

}  // namespace convtune
