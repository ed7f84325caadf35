#pragma once
// A 2D convolution problem (batch N, NHWC input, RSCK weights, NHWK output).
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
  int64_t stride = 1;
  int64_t pad = 0;

  int64_t Ho() const { return (H + 2 * pad - R) / stride + 1; }
  int64_t Wo() const { return (W + 2 * pad - S) / stride + 1; }
  int64_t Hp() const { return H + 2 * pad; }  // padded input height
  int64_t Wp() const { return W + 2 * pad; }  // padded input width
  /// K rounded up to a multiple of the vector length (000 Fig. 8: 28269 -> 28272).
  int64_t padded_K(int64_t lanes) const { return (K + lanes - 1) / lanes * lanes; }
  /// Nominal FLOPs: 2*N*K*C*R*S*Ho*Wo (multiply-adds on padding included).
  double flops() const;
  /// FLOPs of multiply-adds that do not touch zero padding.
  double real_flops() const;
  /// "N=1,K=512,C=256,H=34,W=34,R=3,S=3,stride=1,pad=1"
  std::string to_string() const;
};

/// Parses "K=512,C=256,H=34,R=3" (fields N,K,C,H,W,R,S,stride,pad in any
/// order; defaults N=1, W=H, S=R, stride=1, pad=(R-1)/2), then validate_shape.
/// groups=1 and dilation=1 are accepted; other values of them, and per-axis
/// fields (stride_h, pad_w, ...), are refused as not supported. Throws Error
/// naming the bad field.
Shape parse_shape(const std::string& text);

/// Checks that a shape is possible and within convtune's limits, throwing
/// Error naming the field, its value and the limit:
///  - N, K, C, H, W in [1, 2^20]; R, S, stride in [1, 1024]; pad in [0, 1024];
///  - the kernel fits the padded input (R <= H+2*pad, S <= W+2*pad), so the
///    output is not empty;
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
