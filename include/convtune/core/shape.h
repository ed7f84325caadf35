#pragma once
// A 2D convolution problem (batch N, NHWC input, [K][C/groups][R][S] weights as ONNX stores them, NHWK output).
#include <cstdint>
#include <string>
#include <vector>

namespace convtune {

struct Shape {
  std::string name;  // zoo name ("yolo9000-12") or "" for an ad-hoc shape
  int64_t N = 1;
  int64_t K = 0;  // output channels
  int64_t C = 0;  // input channels
  int64_t H = 0;  // input height (unpadded)
  int64_t W = 0;  // input width (unpadded)
  int64_t R = 0;  // kernel height
  int64_t S = 0;  // kernel width
  int64_t stride_h = 1, stride_w = 1;
  // Zero padding per side (ONNX's pads order: top, left, bottom, right).
  int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  // Tap spacing: tap r reads input row oh*stride_h + r*dil_h - pad_t (ONNX's dilations).
  int64_t dil_h = 1, dil_w = 1;
  // Channel groups: group g's K/groups outputs read only its C/groups inputs;
  // groups = C is depthwise (ONNX's group, oneDNN's g).
  int64_t groups = 1;

  /// Both strides at once (the text form's `stride=`).
  void set_stride(int64_t s) { stride_h = stride_w = s; }
  /// All four pads at once (the text form's `pad=`).
  void set_pad(int64_t p) { pad_t = pad_l = pad_b = pad_r = p; }
  /// Equal strides, equal pads, no dilation, no groups: the classic shape
  /// every microkernel family and view handles, printed as ever.
  bool plain() const {
    return stride_h == stride_w && pad_t == pad_l && pad_t == pad_b && pad_t == pad_r && dil_h == 1 && dil_w == 1 &&
           groups == 1;
  }
  /// The common stride and pad of a shape with equal ones (plain() and its
  /// groups/dilation variants); check square_window() first where it matters.
  bool square_window() const {
    return stride_h == stride_w && pad_t == pad_l && pad_t == pad_b && pad_t == pad_r;
  }
  int64_t stride() const { return stride_h; }
  int64_t pad() const { return pad_t; }
  int64_t Cg() const { return C / groups; }  // input channels of one group
  int64_t Kg() const { return K / groups; }  // output channels of one group
  /// Depthwise: one input channel per group (channel multiplier Kg()).
  bool depthwise() const { return groups > 1 && Cg() == 1; }
  int64_t Re() const { return dil_h * (R - 1) + 1; }  // rows the kernel spans
  int64_t Se() const { return dil_w * (S - 1) + 1; }  // columns the kernel spans
  int64_t Ho() const { return (H + pad_t + pad_b - Re()) / stride_h + 1; }
  int64_t Wo() const { return (W + pad_l + pad_r - Se()) / stride_w + 1; }
  int64_t Hp() const { return H + pad_t + pad_b; }  // padded input height
  int64_t Wp() const { return W + pad_l + pad_r; }  // padded input width
  /// K rounded up to a multiple of the vector length (000 Fig. 8: 28269 -> 28272).
  int64_t padded_K(int64_t lanes) const { return (K + lanes - 1) / lanes * lanes; }
  /// Nominal FLOPs: 2*N*K*(C/groups)*R*S*Ho*Wo (multiply-adds on padding included).
  double flops() const;
  /// FLOPs of multiply-adds that do not touch zero padding.
  double real_flops() const;
  /// Bytes a call must move at least: input, weights and output once each
  /// (fp32). Depthwise layers are bound by this traffic, not by FMAs.
  double tensor_bytes() const;
  /// "N=1,K=512,C=256,H=34,W=34,R=3,S=3,stride=1,pad=1" for a plain shape;
  /// otherwise per-axis strides and pads where they differ
  /// ("stride_h=2,stride_w=1", "pad_h=0,pad_w=3", "pad_t=0,pad_l=0,pad_b=1,pad_r=1"),
  /// then "dilation=2" and "groups=32" where not 1. parse_shape reads it back.
  std::string to_string() const;
};

/// Parses "K=512,C=256,H=34,R=3": fields N,K,C,H,W,R,S in any order, then
/// stride (both axes) or stride_h / stride_w; pad (all four sides), pad_h
/// (top and bottom), pad_w (left and right) or pad_t, pad_l, pad_b, pad_r;
/// dilation or dilation_h / dilation_w; groups. Defaults N=1, W=H, S=R,
/// stride 1, dilation 1, groups 1, and "same" pads for odd kernels
/// ((dilation*(R-1))/2 per axis). Then validate_shape. Throws Error naming
/// the bad field.
Shape parse_shape(const std::string& text);

/// Checks that a shape is possible and within convtune's limits, throwing
/// Error naming the field, its value and the limit:
///  - N, K, C, H, W in [1, 2^20]; R, S, strides, dilations in [1, 1024];
///    pads in [0, 1024]; groups in [1, 2^20] and a divisor of both C and K;
///  - the kernel's span fits the padded input (dil_h*(R-1)+1 <= H+pad_t+pad_b,
///    the same along w), so the output is not empty;
///  - each operand (padded input, weights, output; K padded to 16 lanes) at
///    most 2^28 floats (1 GiB), all three together at most 2^29 (2 GiB);
///  - at most 2^44 FLOP per convolution.
void validate_shape(const Shape& s);

/// The layer zoo (configs/layers.json, embedded in the binary).
struct Network {
  std::string name;
  std::vector<Shape> layers;
};
std::vector<Network> zoo();
/// A layer by name ("yolo9000-12"); throws Error listing close names.
Shape zoo_layer(const std::string& name);

/// A file-name-safe layer name: the zoo or model name ("yolo9000-12"), else
/// "N1_K512_C256_H34_..." for an ad-hoc --shape. Log directories, records,
/// exported symbols and bench tables all name a layer by it.
std::string layer_id(const Shape& s);
/// A network by name ("resnet18"); throws Error listing the networks.
Network zoo_network(const std::string& name);

}  // namespace convtune
