// Conv nodes of an ONNX model, read with the ONNX library (onnx_model.h).
// Shapes come from ONNX's own shape inference, then from propagate() where
// that stops (shapes computed in the graph), so an inner Conv's input dims
// are those the model computes, not guessed here.
#include "convtune/models/onnx_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "convtune/core/error.h"
#include "convtune/core/text.h"

namespace convtune {

namespace {

// Dims of a tensor type: a value per axis, nullopt for a symbolic or unknown one.
using Dims = std::vector<std::optional<int64_t>>;

std::optional<Dims> dims_of(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  Dims d;
  for (const auto& x : t.tensor_type().shape().dim())
    d.push_back(x.has_dim_value() ? std::optional<int64_t>(x.dim_value()) : std::nullopt);
  return d;
}

// The node's first attribute of that name, nullptr when it has none.
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<int64_t> ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : dflt;
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a ? a->i() : dflt;
}

std::string str_attr(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) {
  const onnx::AttributeProto* a = find_attr(n, name);
  return a ? a->s() : dflt;
}

std::string join(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// Pads for auto_pad SAME_UPPER/SAME_LOWER (ONNX operator spec): total
// (ceil(in/stride) - 1) * stride + kernel - in, the odd one at the end (UPPER)
// or the start (LOWER).
void same_pads(const std::string& mode, int64_t in, int64_t k, int64_t stride, int64_t* begin, int64_t* end) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + k - in);
  *begin = mode == "SAME_LOWER" ? total - total / 2 : total / 2;
  *end = total - *begin;
}

// ONNX shape inference into `model`'s value_info. It runs on a copy whose
// Conv and ConvTranspose nodes without a kernel_shape get one from their
// weights' dims: the ONNX library (1.12) otherwise takes the kernel's rank
// from the weights and, when that differs from the input's, reads past its
// vectors and crashes (found by tests/fuzz/onnx_fuzz.cpp); with the attribute
// it refuses the node in an exception. The nodes read afterwards are the
// model's own. Returns "" or the note saying where inference stopped.
std::string infer_shapes(onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  onnx::GraphProto& g = *copy.mutable_graph();
  std::map<std::string, std::vector<int64_t>> dims;  // the weights' dims known before inference
  for (const auto& t : g.initializer()) dims[t.name()] = {t.dims().begin(), t.dims().end()};
  for (const auto& v : g.input())
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape() && !dims.count(v.name())) {
      std::vector<int64_t> d;
      bool symbolic = false;
      for (const auto& x : v.type().tensor_type().shape().dim()) {
        symbolic = symbolic || !x.has_dim_value();
        d.push_back(x.dim_value());
      }
      if (!symbolic) dims[v.name()] = d;  // a symbolic kernel dim: ONNX gives up on the node by itself
    }
  onnx::OperatorSetIdProto* hidden = copy.add_opset_import();  // the domain nodes are hidden in, known to ONNX
  hidden->set_domain("convtune.unchecked");
  hidden->set_version(1);
  for (auto& n : *g.mutable_node()) {
    // A window attribute past 2^24 (pads=2^40) hangs the library's
    // convPoolShapeInference, a stride of 0 with auto_pad SAME divides by
    // zero in it: such a node is hidden from it in a domain of its own (a
    // Conv of them is refused as invalid below anyway).
    for (const auto& at : n.attribute()) {
      const int64_t least = at.name() == "strides" || at.name() == "dilations" || at.name() == "kernel_shape"
                                ? 1 : -(int64_t(1) << 24);
      if (std::any_of(at.ints().begin(), at.ints().end(),
                      [&](int64_t v) { return v < least || v > (int64_t(1) << 24); }))
        n.set_domain("convtune.unchecked");
    }
    if ((n.op_type() != "Conv" && n.op_type() != "ConvTranspose") || n.input_size() < 2) continue;
    bool has_kernel = false;
    for (const auto& at : n.attribute()) has_kernel = has_kernel || at.name() == "kernel_shape";
    auto w = dims.find(n.input(1));
    if (has_kernel || w == dims.end() || w->second.size() < 2) continue;
    onnx::AttributeProto* at = n.add_attribute();
    at->set_name("kernel_shape");
    at->set_type(onnx::AttributeProto::INTS);
    for (size_t i = 2; i < w->second.size(); ++i) at->add_ints(w->second[i]);
  }
  std::string note;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception& e) {
    // Inference may give up on an op it does not know; the dims it did infer stay.
    note = fmt::format("ONNX shape inference stopped early: {}", escape_text(e.what()));
  }
  *model.mutable_graph()->mutable_value_info() = g.value_info();
  for (const auto& v : g.output()) *model.mutable_graph()->add_value_info() = v;
  return note;
}


// ---- Static shapes past ONNX shape inference ----
//
// ONNX 1.12's inference (with or without its data propagation) stops where a
// shape is computed in the graph: torchvision's ShuffleNetV2 slices its
// channels with ends from Shape -> Gather -> Add -> Div -> Mul, DeepLabV3
// resizes to sizes from Shape -> Slice -> Concat. The pass below follows
// those: it evaluates small integer tensors (shape arithmetic) and gives
// every output of the common ops its dims, in graph order (ONNX graphs are
// topologically sorted), filling only what inference left unknown. The rules
// are the ONNX operator spec's output shapes.

using Ints = std::vector<int64_t>;

// Bounds of the propagation, so that a hostile model can neither overflow it
// nor make it allocate without bound: ranks, integer tensors it evaluates,
// and any dim.
constexpr size_t kMostRank = 8;
constexpr size_t kMostValues = 64;
constexpr int64_t kMostDim = int64_t(1) << 40;

// What is known of the graph's tensors.
struct Tensors {
  std::map<std::string, Dims> dims;                           // an axis nullopt when symbolic
  std::map<std::string, Ints> values;                         // small integer tensors, row-major
  std::map<std::string, const onnx::TensorProto*> constants;  // initializers and Constant values
  std::optional<Ints> static_dims(const std::string& t) const {
    auto it = dims.find(t);
    if (t.empty() || it == dims.end()) return std::nullopt;
    Ints d;
    for (const auto& x : it->second) {
      if (!x) return std::nullopt;
      d.push_back(*x);
    }
    return d;
  }
  const Ints* value(const std::string& t) const {
    auto it = values.find(t);
    return it == values.end() ? nullptr : &it->second;
  }
};

std::optional<int64_t> product(const Ints& d) {
  int64_t p = 1;
  for (int64_t x : d)
    if (x < 0 || __builtin_mul_overflow(p, x, &p)) return std::nullopt;
  return p;
}

// A tensor's elements of type T (int64 from INT64/INT32, double from
// FLOAT/DOUBLE), or nullopt when it is larger than kMostValues or malformed.
template <class T>
std::optional<std::vector<T>> tensor_values(const onnx::TensorProto& t) {
  const auto count = product(Ints(t.dims().begin(), t.dims().end()));
  if (!count || *count > int64_t(kMostValues) || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<T> v;
  auto raw = [&](auto zero) -> bool {
    if (t.raw_data().size() != size_t(*count) * sizeof(zero)) return false;
    for (int64_t i = 0; i < *count; ++i) {
      std::memcpy(&zero, t.raw_data().data() + i * sizeof(zero), sizeof(zero));
      v.push_back(T(zero));
    }
    return true;
  };
  auto typed = [&](const auto& field) -> bool {
    if (field.size() != *count) return false;
    for (auto x : field) v.push_back(T(x));
    return true;
  };
  const bool raw_data = t.has_raw_data();
  bool ok = false;
  if constexpr (std::is_integral_v<T>) {
    if (t.data_type() == onnx::TensorProto::INT64) ok = raw_data ? raw(int64_t(0)) : typed(t.int64_data());
    if (t.data_type() == onnx::TensorProto::INT32) ok = raw_data ? raw(int32_t(0)) : typed(t.int32_data());
  } else {
    if (t.data_type() == onnx::TensorProto::FLOAT) ok = raw_data ? raw(0.0f) : typed(t.float_data());
    if (t.data_type() == onnx::TensorProto::DOUBLE) ok = raw_data ? raw(0.0) : typed(t.double_data());
  }
  if (!ok) return std::nullopt;
  return v;
}

bool has_attr(const onnx::NodeProto& n, const std::string& name) {
  return find_attr(n, name) != nullptr;
}

// An axis attribute or value made non-negative for a rank, nullopt when out of range.
std::optional<int64_t> axis_in(int64_t a, size_t rank) {
  if (a < -int64_t(rank) || a >= int64_t(rank)) return std::nullopt;
  return a < 0 ? a + int64_t(rank) : a;
}

// Numpy broadcasting of several shapes (ONNX's multidirectional broadcasting).
std::optional<Ints> broadcast(const std::vector<Ints>& in) {
  size_t rank = 0;
  for (const auto& d : in) rank = std::max(rank, d.size());
  Ints out(rank, 1);
  for (const auto& d : in)
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& o = out[rank - d.size() + i];
      if (d[i] == o || d[i] == 1) continue;
      if (o != 1) return std::nullopt;
      o = d[i];
    }
  return out;
}

// The output length of a sliding window along one axis (ONNX Conv and
// MaxPool): floor or ceil of (in + pads - span) / stride, plus 1; with
// ceil_mode a window that would start in the end padding is dropped (the
// ONNX MaxPool spec since opset 19, as PyTorch computes it).
std::optional<int64_t> window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe,
                                  bool ceil_mode) {
  constexpr int64_t kMostWindow = int64_t(1) << 24;  // kernel, stride, dilation, pads: no product overflows
  if (k < 1 || stride < 1 || dil < 1 || pb < 0 || pe < 0 || k > kMostWindow || stride > kMostWindow ||
      dil > kMostWindow || pb > kMostWindow || pe > kMostWindow)
    return std::nullopt;
  const int64_t span = (k - 1) * dil + 1, room = in + pb + pe - span;
  if (room < 0) return std::nullopt;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pb) --out;
  return out;
}

// Output dims of Conv, MaxPool, AveragePool and LpPool: N, the channels
// (`channels`), then one window per spatial axis.
std::optional<Ints> window_dims(const onnx::NodeProto& n, const Ints& x, const Ints& kernel, int64_t channels) {
  const size_t sp = kernel.size();
  if (x.size() != sp + 2 || sp == 0) return std::nullopt;
  const Ints strides = ints(n, "strides", Ints(sp, 1)), dil = ints(n, "dilations", Ints(sp, 1));
  Ints pads = ints(n, "pads", Ints(2 * sp, 0));
  const std::string auto_pad = str_attr(n, "auto_pad", "NOTSET");
  const bool ceil_mode = int_attr(n, "ceil_mode", 0) != 0;
  if (strides.size() != sp || dil.size() != sp) return std::nullopt;
  Ints out{x[0], channels};
  for (size_t i = 0; i < sp; ++i) {
    constexpr int64_t kMostWindow = int64_t(1) << 24;
    if (strides[i] < 1 || strides[i] > kMostWindow || dil[i] < 1 || dil[i] > kMostWindow) return std::nullopt;
    int64_t pb = 0, pe = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      if (kernel[i] < 1 || kernel[i] > kMostWindow) return std::nullopt;
      same_pads(auto_pad, x[i + 2], (kernel[i] - 1) * dil[i] + 1, strides[i], &pb, &pe);
    } else if (auto_pad == "NOTSET") {
      if (pads.size() != 2 * sp) return std::nullopt;
      pb = pads[i], pe = pads[i + sp];
    } else if (auto_pad != "VALID") {
      return std::nullopt;
    }
    const auto o = window_out(x[i + 2], kernel[i], strides[i], dil[i], pb, pe, ceil_mode);
    if (!o) return std::nullopt;
    out.push_back(*o);
  }
  return out;
}

// The first index and the length of ONNX Slice along an axis of `dim`:
// negative starts and ends count from the end, then both are clamped; steps
// may be negative.
std::optional<std::pair<int64_t, int64_t>> slice_range(int64_t dim, int64_t s, int64_t e, int64_t step) {
  if (step == 0 || step == std::numeric_limits<int64_t>::min()) return std::nullopt;
  if (dim == 0) return std::pair<int64_t, int64_t>{0, 0};
  if (s < 0) s += dim;
  if (e < 0) e += dim;
  if (step > 0) {
    s = std::clamp<int64_t>(s, 0, dim), e = std::clamp<int64_t>(e, 0, dim);
    return std::pair<int64_t, int64_t>{s, e > s ? (e - s - 1) / step + 1 : 0};
  }
  s = std::clamp<int64_t>(s, 0, dim - 1), e = std::clamp<int64_t>(e, -1, dim - 1);
  return std::pair<int64_t, int64_t>{s, s > e ? (s - e - 1) / -step + 1 : 0};
}

// A Slice's starts, ends, axes and steps: attributes before opset 10, inputs since.
struct SliceArgs {
  Ints starts, ends, axes, steps;
};
std::optional<SliceArgs> slice_args(const onnx::NodeProto& n, const Tensors& t, size_t rank) {
  SliceArgs a;
  if (has_attr(n, "starts")) {
    a = {ints(n, "starts", {}), ints(n, "ends", {}), ints(n, "axes", {}), {}};
  } else {
    Ints* field[] = {&a.starts, &a.ends, &a.axes, &a.steps};
    for (int i = 1; i <= 4; ++i) {
      if (n.input_size() <= i || n.input(i).empty()) {
        if (i <= 2) return std::nullopt;
        continue;
      }
      const Ints* v = t.value(n.input(i));
      if (!v) return std::nullopt;
      *field[i - 1] = *v;
    }
  }
  if (a.axes.empty())
    for (size_t i = 0; i < a.starts.size(); ++i) a.axes.push_back(int64_t(i));
  if (a.steps.empty()) a.steps.assign(a.starts.size(), 1);
  if (a.ends.size() != a.starts.size() || a.axes.size() != a.starts.size() || a.steps.size() != a.starts.size())
    return std::nullopt;
  for (int64_t& axis : a.axes) {
    const auto i = axis_in(axis, rank);
    if (!i) return std::nullopt;
    axis = *i;
  }
  return a;
}

std::optional<Ints> slice_dims(const onnx::NodeProto& n, const Tensors& t, Ints d) {
  const auto a = slice_args(n, t, d.size());
  if (!a) return std::nullopt;
  for (size_t i = 0; i < a->starts.size(); ++i) {
    const auto r = slice_range(d[a->axes[i]], a->starts[i], a->ends[i], a->steps[i]);
    if (!r) return std::nullopt;
    d[a->axes[i]] = r->second;
  }
  return d;
}

// Reshape to `shape` (ONNX Reshape: 0 copies the input's dim unless
// allowzero, one -1 takes what is left).
std::optional<Ints> reshape_dims(const Ints& d, const Ints& shape, bool allowzero) {
  const auto total = product(d);
  if (!total || shape.size() > kMostRank) return std::nullopt;
  Ints out;
  int64_t known = 1;
  std::optional<size_t> rest;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == 0 && !allowzero) {
      if (i >= d.size()) return std::nullopt;
      v = d[i];
    }
    if (v == -1) {
      if (rest) return std::nullopt;
      rest = i;
      out.push_back(1);
      continue;
    }
    if (v < 0 || __builtin_mul_overflow(known, v, &known)) return std::nullopt;
    out.push_back(v);
  }
  if (rest) {
    if (known == 0 || *total % known != 0) return std::nullopt;
    out[*rest] = *total / known;
  } else if (known != *total) {
    return std::nullopt;
  }
  return out;
}

// The axes of a Squeeze, Unsqueeze, Reduce*, Slice or Pad: the attribute
// (before opset 13) or the input (since), empty when neither is given.
std::optional<Ints> axes_of(const onnx::NodeProto& n, const Tensors& t, int input, const char* attr = "axes") {
  if (has_attr(n, attr)) return ints(n, attr, {});
  if (n.input_size() <= input || n.input(input).empty()) return Ints{};
  if (const Ints* v = t.value(n.input(input))) return *v;
  return std::nullopt;
}

std::optional<Ints> squeeze_dims(const onnx::NodeProto& n, const Tensors& t, const Ints& d) {
  const auto axes = axes_of(n, t, 1);
  if (!axes) return std::nullopt;
  const bool unsqueeze = n.op_type() == "Unsqueeze";
  const size_t rank = unsqueeze ? d.size() + axes->size() : d.size();
  std::vector<bool> marked(rank, false);
  for (int64_t a : *axes) {
    const auto i = axis_in(a, rank);
    if (!i || marked[*i] || (!unsqueeze && d[*i] != 1)) return std::nullopt;
    marked[*i] = true;
  }
  Ints out;
  for (size_t i = 0, j = 0; i < rank; ++i) {
    if (unsqueeze) {
      out.push_back(marked[i] ? 1 : d[j++]);
    } else if (axes->empty() ? d[i] != 1 : !marked[i]) {
      out.push_back(d[i]);
    }
  }
  return out;
}

// ReduceMean and its kin, ArgMax and ArgMin: the reduced axes kept as 1
// (keepdims, the default) or dropped.
std::optional<Ints> reduce_dims(const onnx::NodeProto& n, const Tensors& t, const Ints& d) {
  const bool arg = n.op_type() == "ArgMax" || n.op_type() == "ArgMin";
  const auto axes = arg ? std::optional<Ints>(Ints{int_attr(n, "axis", 0)}) : axes_of(n, t, 1);
  if (!axes) return std::nullopt;
  if (axes->empty() && int_attr(n, "noop_with_empty_axes", 0) != 0) return d;
  std::vector<bool> reduced(d.size(), axes->empty());
  for (int64_t a : *axes) {
    const auto i = axis_in(a, d.size());
    if (!i) return std::nullopt;
    reduced[*i] = true;
  }
  const bool keep = int_attr(n, "keepdims", 1) != 0;
  Ints out;
  for (size_t i = 0; i < d.size(); ++i)
    if (!reduced[i] || keep) out.push_back(reduced[i] ? 1 : d[i]);
  return out;
}

// Resize and Upsample: to the sizes input, or the input's dims times the
// constant scales (ONNX Resize: floor(in * scale)).
std::optional<Ints> resize_dims(const onnx::NodeProto& n, const Tensors& t, const Ints& d) {
  if (has_attr(n, "axes")) return std::nullopt;
  if (n.input_size() >= 4 && !n.input(3).empty()) {
    const Ints* sizes = t.value(n.input(3));
    if (!sizes || sizes->size() != d.size()) return std::nullopt;
    return *sizes;
  }
  const int si = n.input_size() >= 3 ? 2 : 1;  // Resize-11's X, roi, scales; Resize-10's and Upsample's X, scales
  auto c = n.input_size() > si ? t.constants.find(n.input(si)) : t.constants.end();
  if (c == t.constants.end()) return std::nullopt;
  const auto scales = tensor_values<double>(*c->second);
  if (!scales || scales->size() != d.size()) return std::nullopt;
  Ints out;
  for (size_t i = 0; i < d.size(); ++i) {
    const double v = std::floor(double(d[i]) * (*scales)[i]);
    if (!(v >= 0 && v <= double(kMostDim))) return std::nullopt;
    out.push_back(int64_t(v));
  }
  return out;
}

// Ops whose (first) output has the dims of their first input.
const std::set<std::string> kSameDims = {
    "Identity", "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
    "Softplus", "Softsign", "Mish", "Gelu", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Ceil", "Floor",
    "Round", "Sign", "Sin", "Cos", "Clip", "Cast", "CastLike", "Dropout", "BatchNormalization",
    "InstanceNormalization", "LayerNormalization", "LRN", "Softmax", "LogSoftmax", "Hardmax", "Not", "IsNaN", "IsInf",
    "QuantizeLinear", "DequantizeLinear", "Shrink", "ThresholdedRelu", "CumSum", "MeanVarianceNormalization",
    "LpNormalization"};
// Ops whose output broadcasts all their inputs.
const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                                          "Where", "And", "Or", "Xor", "Equal", "Less", "Greater", "LessOrEqual",
                                          "GreaterOrEqual", "BitShift"};
const std::set<std::string> kWindows = {"MaxPool", "AveragePool", "LpPool"};
const std::set<std::string> kGlobalPools = {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"};
const std::set<std::string> kReduce = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd",
                                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
                                       "ArgMax", "ArgMin"};

// Concat along an axis: the other dims equal, the axis summed.
std::optional<Ints> concat_dims(const onnx::NodeProto& n, const std::vector<Ints>& in) {
  if (in.empty()) return std::nullopt;
  const auto axis = axis_in(int_attr(n, "axis", 0), in[0].size());
  if (!axis) return std::nullopt;
  Ints out = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    if (in[k].size() != out.size()) return std::nullopt;
    for (size_t i = 0; i < out.size(); ++i)
      if (int64_t(i) != *axis && in[k][i] != out[i]) return std::nullopt;
    out[*axis] += in[k][*axis];
    if (out[*axis] > kMostDim) return std::nullopt;
  }
  return out;
}

// Split along an axis: sizes from the input (since opset 13), the attribute
// (before), or equal parts, the last one smaller when uneven (opset 18).
std::optional<std::vector<Ints>> split_dims(const onnx::NodeProto& n, const Tensors& t, const Ints& d) {
  const auto axis = axis_in(int_attr(n, "axis", 0), d.size());
  const auto sizes = axes_of(n, t, 1, "split");
  const int64_t parts = n.output_size();
  if (!axis || !sizes || parts < 1) return std::nullopt;
  Ints split = *sizes;
  if (split.empty()) {
    const int64_t each = (d[*axis] + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::min(each, d[*axis] - i * each));
  }
  if (int64_t(split.size()) != parts) return std::nullopt;
  std::vector<Ints> out;
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0 || s > kMostDim) return std::nullopt;
    sum += s;
    if (sum > kMostDim) return std::nullopt;
    out.push_back(d);
    out.back()[*axis] = s;
  }
  if (sum != d[*axis]) return std::nullopt;
  return out;
}

// Data movement: Transpose, Flatten, Gather, Pad, Expand, Tile, DepthToSpace, SpaceToDepth.
std::optional<Ints> movement_dims(const onnx::NodeProto& n, const Tensors& t,
                                  const std::vector<std::optional<Ints>>& in) {
  const std::string& op = n.op_type();
  const Ints& d = *in[0];
  const Ints* v1 = n.input_size() > 1 ? t.value(n.input(1)) : nullptr;
  if (op == "Transpose") {
    Ints perm = ints(n, "perm", {});
    if (perm.empty())
      for (size_t i = d.size(); i-- > 0;) perm.push_back(int64_t(i));
    if (perm.size() != d.size()) return std::nullopt;
    Ints out;
    std::vector<bool> used(d.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(d.size()) || used[p]) return std::nullopt;
      used[p] = true;
      out.push_back(d[p]);
    }
    return out;
  }
  if (op == "Flatten") {
    int64_t axis = int_attr(n, "axis", 1);
    if (axis < 0) axis += int64_t(d.size());
    if (axis < 0 || axis > int64_t(d.size())) return std::nullopt;
    const auto a = product(Ints(d.begin(), d.begin() + axis)), b = product(Ints(d.begin() + axis, d.end()));
    if (!a || !b) return std::nullopt;
    return Ints{*a, *b};
  }
  if (op == "Gather") {
    const auto axis = axis_in(int_attr(n, "axis", 0), d.size());
    if (!axis || n.input_size() < 2 || !in[1]) return std::nullopt;
    Ints out(d.begin(), d.begin() + *axis);
    out.insert(out.end(), in[1]->begin(), in[1]->end());
    out.insert(out.end(), d.begin() + *axis + 1, d.end());
    return out;
  }
  if (op == "Pad") {
    const Ints pads = has_attr(n, "pads") ? ints(n, "pads", {}) : v1 ? *v1 : Ints{};
    if (pads.size() != 2 * d.size() || (n.input_size() > 3 && !n.input(3).empty())) return std::nullopt;
    Ints out = d;
    for (size_t i = 0; i < d.size(); ++i) {
      for (int64_t p : {pads[i], pads[i + d.size()]})
        if (p < -kMostDim || p > kMostDim) return std::nullopt;
      out[i] += pads[i] + pads[i + d.size()];
      if (out[i] < 0) return std::nullopt;
    }
    return out;
  }
  if (op == "Expand") return v1 ? broadcast({d, *v1}) : std::nullopt;
  if (op == "Tile") {
    if (!v1 || v1->size() != d.size()) return std::nullopt;
    Ints out;
    for (size_t i = 0; i < d.size(); ++i) {
      const auto p = product({d[i], (*v1)[i]});
      if (!p || *p > kMostDim) return std::nullopt;
      out.push_back(*p);
    }
    return out;
  }
  const int64_t b = int_attr(n, "blocksize", 0);
  if (d.size() != 4 || b < 1 || b > 1024) return std::nullopt;
  if (op == "DepthToSpace" && d[1] % (b * b) == 0) return Ints{d[0], d[1] / (b * b), d[2] * b, d[3] * b};
  if (op == "SpaceToDepth" && d[2] % b == 0 && d[3] % b == 0) return Ints{d[0], d[1] * b * b, d[2] / b, d[3] / b};
  return std::nullopt;
}

// Gemm and MatMul: the matrix product's dims.
std::optional<Ints> product_dims(const onnx::NodeProto& n, const std::vector<std::optional<Ints>>& in) {
  if (in.size() < 2 || !in[0] || !in[1]) return std::nullopt;
  const Ints &a = *in[0], &b = *in[1];
  if (n.op_type() == "Gemm") {
    if (a.size() != 2 || b.size() != 2) return std::nullopt;
    return Ints{int_attr(n, "transA", 0) ? a[1] : a[0], int_attr(n, "transB", 0) ? b[0] : b[1]};
  }
  if (a.size() < 2 || b.size() < 2) return std::nullopt;
  auto batch = broadcast({Ints(a.begin(), a.end() - 2), Ints(b.begin(), b.end() - 2)});
  if (!batch || a.back() != b[b.size() - 2]) return std::nullopt;
  batch->push_back(a[a.size() - 2]);
  batch->push_back(b.back());
  return batch;
}

// The dims of each output of a node whose inputs' dims are known (nullopt
// for an input not known); empty when the node's op or attributes are not
// followed.
std::vector<Ints> node_dims_of(const onnx::NodeProto& n, const Tensors& t) {
  std::vector<std::optional<Ints>> in;
  for (const auto& i : n.input()) in.push_back(t.static_dims(i));
  const std::string& op = n.op_type();
  const Ints* v0 = n.input_size() > 0 ? t.value(n.input(0)) : nullptr;
  if (op == "ConstantOfShape" && v0) return {*v0};
  if (op == "Constant") {
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) return {Ints(a.t().dims().begin(), a.t().dims().end())};
      if (a.name() == "value_ints" || a.name() == "value_floats")
        return {Ints{a.name() == "value_ints" ? a.ints_size() : a.floats_size()}};
      if (a.name() == "value_int" || a.name() == "value_float") return {Ints{}};
    }
    return {};
  }
  std::vector<Ints> all;  // every input known (Concat, broadcasting ops)
  for (const auto& d : in)
    if (d) all.push_back(*d);
  if (kBroadcast.count(op)) {
    if (all.size() != in.size()) return {};
    const auto o = broadcast(all);
    return o ? std::vector<Ints>{*o} : std::vector<Ints>{};
  }
  if (op == "Concat") {
    const auto o = all.size() == in.size() ? concat_dims(n, all) : std::nullopt;
    return o ? std::vector<Ints>{*o} : std::vector<Ints>{};
  }
  if (op == "Gemm" || op == "MatMul") {
    const auto o = product_dims(n, in);
    return o ? std::vector<Ints>{*o} : std::vector<Ints>{};
  }
  if (in.empty() || !in[0]) return {};
  const Ints& d = *in[0];
  if (op == "Split") return split_dims(n, t, d).value_or(std::vector<Ints>{});
  std::optional<Ints> o;
  if (kSameDims.count(op)) o = d;
  else if (op == "Shape") o = Ints{int64_t(d.size())};
  else if (op == "Size") o = Ints{};
  else if (op == "Reshape" && n.input_size() > 1 && t.value(n.input(1)))
    o = reshape_dims(d, *t.value(n.input(1)), int_attr(n, "allowzero", 0) != 0);
  else if (op == "Squeeze" || op == "Unsqueeze") o = squeeze_dims(n, t, d);
  else if (op == "Slice") o = slice_dims(n, t, d);
  else if (kReduce.count(op)) o = reduce_dims(n, t, d);
  else if (op == "Resize" || op == "Upsample") o = resize_dims(n, t, d);
  else if (kGlobalPools.count(op) && d.size() >= 3) {
    o = Ints(d.size(), 1);
    (*o)[0] = d[0], (*o)[1] = d[1];
  }
  else if (kWindows.count(op)) o = window_dims(n, d, ints(n, "kernel_shape", {}), d.size() >= 2 ? d[1] : 0);
  else if (op == "Conv" && in.size() > 1 && in[1] && in[1]->size() >= 2)
    o = window_dims(n, d, ints(n, "kernel_shape", Ints(in[1]->begin() + 2, in[1]->end())), (*in[1])[0]);
  else o = movement_dims(n, t, in);
  if (!o) return {};
  std::vector<Ints> out{*o};
  if ((op == "MaxPool" || op == "Dropout") && n.output_size() > 1) out.push_back(*o);  // indices, mask
  return out;
}

std::vector<Ints> node_dims(const onnx::NodeProto& n, const Tensors& t) {
  std::vector<Ints> out = node_dims_of(n, t);
  for (const Ints& o : out)
    if (o.size() > kMostRank || std::any_of(o.begin(), o.end(), [](int64_t x) { return x < 0 || x > kMostDim; }))
      return {};
  return out;
}

// Integer arithmetic of shape computations, checked (nullopt on overflow or
// a division by zero); Div truncates, as ONNX Runtime's integer Div.
std::optional<int64_t> arith(const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "Add") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Sub") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Mul") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Div" && b != 0 && !(a == std::numeric_limits<int64_t>::min() && b == -1)) return a / b;
  return std::nullopt;
}

// The values of output 0 of a node that computes a small integer tensor
// from known values or dims: Constant, Shape, Size, Gather, Slice, Concat,
// arithmetic, and the ops that only relabel (Reshape, Squeeze, Cast to an
// integer type, ...).
std::optional<Ints> node_values(const onnx::NodeProto& n, const Tensors& t) {
  const std::string& op = n.op_type();
  auto v = [&](int i) { return n.input_size() > i ? t.value(n.input(i)) : nullptr; };
  const auto d0 = n.input_size() > 0 ? t.static_dims(n.input(0)) : std::nullopt;
  if (op == "Constant") {
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t()) return tensor_values<int64_t>(a.t());
      if (a.name() == "value_ints" && size_t(a.ints_size()) <= kMostValues)
        return Ints(a.ints().begin(), a.ints().end());
      if (a.name() == "value_int") return Ints{a.i()};
    }
    return std::nullopt;
  }
  if (op == "Shape" && d0) {
    const int64_t rank = int64_t(d0->size());
    int64_t s = int_attr(n, "start", 0), e = int_attr(n, "end", rank);
    s = std::clamp<int64_t>(s < 0 ? s + rank : s, 0, rank), e = std::clamp<int64_t>(e < 0 ? e + rank : e, 0, rank);
    return Ints(d0->begin() + s, d0->begin() + std::max(s, e));
  }
  if (op == "Size" && d0) return product(*d0) ? std::optional<Ints>(Ints{*product(*d0)}) : std::nullopt;
  const bool to_int = op == "Cast" && (int_attr(n, "to", 0) == onnx::TensorProto::INT64 ||
                                       int_attr(n, "to", 0) == onnx::TensorProto::INT32);
  if ((op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || to_int) &&
      v(0))
    return *v(0);
  if (op == "Concat") {
    if (!d0 || axis_in(int_attr(n, "axis", 0), d0->size()) != 0) return std::nullopt;
    Ints out;
    for (int i = 0; i < n.input_size(); ++i) {
      if (!v(i) || out.size() + v(i)->size() > kMostValues) return std::nullopt;
      out.insert(out.end(), v(i)->begin(), v(i)->end());
    }
    return out;
  }
  if (op == "Gather" && v(0) && v(1) && d0 && d0->size() == 1 && int_attr(n, "axis", 0) == 0) {
    Ints out;
    for (int64_t i : *v(1)) {
      const auto j = axis_in(i, v(0)->size());
      if (!j) return std::nullopt;
      out.push_back((*v(0))[*j]);
    }
    return out;
  }
  if (op == "Slice" && v(0) && d0 && d0->size() == 1) {
    const auto a = slice_args(n, t, 1);
    if (!a || a->starts.size() != 1) return std::nullopt;
    const auto r = slice_range(int64_t(v(0)->size()), a->starts[0], a->ends[0], a->steps[0]);
    if (!r) return std::nullopt;
    Ints out;
    for (int64_t k = 0; k < r->second; ++k) out.push_back((*v(0))[r->first + k * a->steps[0]]);
    return out;
  }
  if (n.input_size() == 2 && v(0) && v(1)) {
    const Ints &a = *v(0), &b = *v(1);
    const auto da = t.static_dims(n.input(0)), db = t.static_dims(n.input(1));
    // Equal shapes, or one side a single value (the shape arithmetic exporters emit).
    if (!da || !db || a.empty() || b.empty()) return std::nullopt;
    const bool same = *da == *db && a.size() == b.size();
    if (!same && !(a.size() == 1 && da->size() <= db->size()) && !(b.size() == 1 && db->size() <= da->size()))
      return std::nullopt;
    Ints out;
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      const auto r = arith(op, a[a.size() == 1 ? 0 : i], b[b.size() == 1 ? 0 : i]);
      if (!r) return std::nullopt;
      out.push_back(*r);
    }
    return out;
  }
  return std::nullopt;
}

// Fills `t` past ONNX shape inference, node by node in graph order: values
// first (a Shape's output is known even where inference gave its dims), then
// the dims of any output inference left unknown.
void propagate(const onnx::GraphProto& g, Tensors& t) {
  for (const auto& n : g.node()) {
    // A custom op's outputs stay unknown.
    if ((!n.domain().empty() && n.domain() != "ai.onnx") || n.output_size() == 0) continue;
    if (!t.values.count(n.output(0)))
      if (auto v = node_values(n, t); v && v->size() <= kMostValues) t.values[n.output(0)] = *v;
    bool known = true;
    for (const auto& o : n.output()) known = known && (o.empty() || t.static_dims(o));
    if (known) continue;
    const std::vector<Ints> out = node_dims(n, t);
    for (size_t i = 0; i < out.size() && i < size_t(n.output_size()); ++i)
      if (!n.output(i).empty() && !t.static_dims(n.output(i))) t.dims[n.output(i)] = Dims(out[i].begin(), out[i].end());
  }
}

// ---- The Conv nodes ----

// Producers and model inputs of the graph's tensors.
struct Graph {
  const onnx::GraphProto& g;
  std::map<std::string, const onnx::NodeProto*> producer;
  std::set<std::string> initializers;
  explicit Graph(const onnx::GraphProto& graph) : g(graph) {
    for (const auto& n : g.node())
      for (const auto& o : n.output()) producer[o] = &n;
    for (const auto& t : g.initializer()) initializers.insert(t.name());
  }
  const onnx::ValueInfoProto* input(const std::string& t) const {
    for (const auto& v : g.input())
      if (v.name() == t) return &v;
    return nullptr;
  }
};

std::string node_label(const onnx::NodeProto& n) { return escape_text(n.name().empty() ? n.op_type() : n.name()); }

// Walks upstream of `tensor`, depth first and each tensor once: visit(u,
// todo) looks at tensor u, pushes onto todo the tensors to walk next, and
// ends the walk with its result.
template <typename R, typename F>
std::optional<R> walk_upstream(const std::string& tensor, F visit) {
  std::vector<std::string> todo{tensor};
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string u = todo.back();
    todo.pop_back();
    if (!seen.insert(u).second) continue;
    if (std::optional<R> r = visit(u, todo)) return r;
  }
  return std::nullopt;
}

// The nearest node upstream of `tensor` (itself or an ancestor's producer)
// of a custom domain, whose outputs ONNX shape inference cannot know.
const onnx::NodeProto* custom_ancestor(const Graph& gr, const std::string& tensor) {
  using Found = const onnx::NodeProto*;
  auto visit = [&](const std::string& t, std::vector<std::string>& todo) -> std::optional<Found> {
    auto it = gr.producer.find(t);
    if (it == gr.producer.end()) return std::nullopt;
    const onnx::NodeProto* p = it->second;
    if (!p->domain().empty() && p->domain() != "ai.onnx") return p;
    for (const auto& i : p->input()) todo.push_back(i);
    return std::nullopt;
  };
  return walk_upstream<Found>(tensor, visit).value_or(nullptr);
}

// Why a Conv's input has no static dims: an op of a custom domain upstream,
// a model input of symbolic dims, or the first node upstream whose inputs
// are known and outputs not (where neither ONNX nor propagate() follows).
std::string unknown_input_reason(const Graph& gr, const Tensors& t, const std::string& tensor) {
  const std::string x = escape_text(tensor);
  if (const onnx::NodeProto* custom = custom_ancestor(gr, tensor))
    return fmt::format("its input '{}' has no inferred shape: it comes after node {} (op {} of the custom domain "
                       "'{}'), which ONNX shape inference does not know",
                       x, node_label(*custom), escape_text(custom->op_type()), escape_text(custom->domain()));
  auto visit = [&](const std::string& u, std::vector<std::string>& todo) -> std::optional<std::string> {
    auto p = gr.producer.find(u);
    if (p == gr.producer.end()) {
      const onnx::ValueInfoProto* in = gr.input(u);
      if (!in) return fmt::format("its input '{}' has no static shape: no node makes '{}' and it is no input of the "
                                  "model; the model is invalid", x, escape_text(u));
      std::vector<std::string> d;
      if (in->type().has_tensor_type() && in->type().tensor_type().has_shape())
        for (const auto& a : in->type().tensor_type().shape().dim())
          d.push_back(a.has_dim_value()         ? std::to_string(a.dim_value())
                      : a.dim_param().empty() ? "?"
                                              : escape_text(a.dim_param()));
      return fmt::format("its input '{}' has no static shape: the model's input '{}' has dims [{}]; export the model "
                         "with fixed input sizes (torch.onnx.export with a concrete example input, no dynamic_axes)",
                         x, escape_text(u), fmt::join(d, ","));
    }
    bool inputs_known = true;
    for (const auto& i : p->second->input())
      if (!i.empty() && !t.static_dims(i)) inputs_known = false, todo.push_back(i);
    if (inputs_known)
      return fmt::format("its input '{}' has no static shape: node {} (op {}) gives '{}' dims that depend on "
                         "values known only at run time (or an op neither ONNX shape inference nor convtune "
                         "follows); export the model with fixed input sizes and constant folding "
                         "(torch.onnx.export's default)",
                         x, node_label(*p->second), escape_text(p->second->op_type()), escape_text(u));
    return std::nullopt;
  };
  return walk_upstream<std::string>(tensor, visit).value_or(fmt::format("its input '{}' has no static shape", x));
}

// "" when a Conv's weights are constant (an initializer, a Constant node's
// value, or an Identity of one: torch.onnx.export shares weights so), else
// why not, naming the fix.
std::string weight_not_constant(const Graph& gr, const std::string& w) {
  std::string u = w;
  for (int hops = 0; hops < 64; ++hops) {
    if (gr.initializers.count(u)) return "";
    auto p = gr.producer.find(u);
    if (p == gr.producer.end()) {
      const std::string what = gr.input(u) ? fmt::format("the model's input '{}'", escape_text(u))
                                           : fmt::format("'{}', which no node makes", escape_text(u));
      return fmt::format("its weights '{}' are not a constant: they are {}; convtune tunes convolutions of fixed "
                         "weights: export the model with its weights as initializers (torch.onnx.export's "
                         "export_params=True)",
                         escape_text(w), what);
    }
    const onnx::NodeProto& n = *p->second;
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx")) return "";
    if (n.op_type() != "Identity" || n.input_size() < 1) {
      return fmt::format("its weights '{}' are not a constant: node {} (op {}) computes them; convtune tunes "
                         "convolutions of fixed weights: export the model with its weights as initializers "
                         "(torch.onnx.export's export_params=True, constant folding on)",
                         escape_text(w), node_label(n), escape_text(n.op_type()));
    }
    u = n.input(0);
  }
  return fmt::format("its weights '{}' come through more than 64 Identity nodes; the model is invalid", escape_text(w));
}

std::string conv_dims_text(int64_t N, int64_t K, int64_t C, int64_t H, int64_t W, int64_t R, int64_t S,
                           const Ints& strides, const Ints& pads, int64_t groups, const Ints& dil) {
  return fmt::format("N={} K={} C={} H={} W={} R={} S={} strides={} pads={} groups={} dilations={}", N, K, C, H, W, R,
                     S, join(strides), join(pads), groups, join(dil));
}

// Why a Conv's attributes make no valid 2-D convolution of these dims, or "".
std::string conv_attr_problem(const Ints& dims, const Ints& kernel, const Ints& strides, const Ints& dil,
                              const Ints& pads, const std::string& auto_pad, int64_t groups, int64_t wc) {
  const int64_t C = dims[1], K = dims[4], R = dims[5], S = dims[6];
  // Every repeated attribute's length first (a 2-D Conv has 2 of each, 4
  // pads), then its values: nothing below indexes past them.
  auto length = [&](const char* name, const Ints& v, size_t want) {
    return fmt::format("{}=[{}] has {} value{}; a 2-D Conv has {}", name, join(v), v.size(), v.size() == 1 ? "" : "s",
                       want);
  };
  // Bounds before any arithmetic on them (no overflow on a hostile model).
  constexpr int64_t kMost = int64_t(1) << 24;
  auto positive = [&](const Ints& v, int64_t least) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e >= least && e <= kMost; });
  };
  const bool automatic = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" || auto_pad == "VALID";
  if (!positive(dims, 1))
    return fmt::format("dims N={} C={} H={} W={} K={} R={} S={} are not all in [1, {}]; the model is invalid", dims[0],
                       C, dims[2], dims[3], K, R, S, kMost);
  if (kernel.size() != 2) return length("kernel_shape", kernel, 2);
  if (strides.size() != 2) return length("strides", strides, 2);
  if (dil.size() != 2) return length("dilations", dil, 2);
  if (pads.size() != 4 && !automatic) return length("pads", pads, 4);
  if (!automatic && auto_pad != "NOTSET")
    return fmt::format("auto_pad='{}' is none of NOTSET, SAME_UPPER, SAME_LOWER and VALID; the model is invalid",
                       escape_text(auto_pad));
  if (kernel[0] != R || kernel[1] != S)
    return fmt::format("kernel_shape={} differs from the weights' {},{}; the model is inconsistent", join(kernel), R,
                       S);
  if (!positive(strides, 1) || !positive(dil, 1) || (!automatic && !positive(pads, 0)))
    return fmt::format("strides={} dilations={} pads={}: strides and dilations must be at least 1, pads at least 0; "
                       "the model is invalid",
                       join(strides), join(dil), join(pads));
  if (groups < 1 || groups > kMost || C % groups != 0 || K % groups != 0)
    return fmt::format("group={} does not divide both the input's {} channels and the {} outputs; the model is invalid",
                       groups, C, K);
  if (wc * groups != C)
    return fmt::format("weights have {} input channels per group, the input {} in {} group{}; the model is "
                       "inconsistent",
                       wc, C, groups, groups == 1 ? "" : "s");
  return "";
}

// A Conv node of a 4-D input and 4-D constant weights of known dims as a
// Shape: per-axis strides, dilations and the four pads (ONNX's [x1_begin,
// x2_begin, x1_end, x2_end] = top, left, bottom, right; auto_pad as the
// ONNX Conv spec computes it), groups. c.skip says why not.
void read_conv_attrs(const onnx::NodeProto& n, const Ints& x, const Ints& w, OnnxConv& c) {
  const int64_t N = x[0], C = x[1], H = x[2], W = x[3], K = w[0], R = w[2], S = w[3];
  const int64_t groups = int_attr(n, "group", 1);
  const Ints strides = ints(n, "strides", {1, 1}), dil = ints(n, "dilations", {1, 1});
  const Ints kernel = ints(n, "kernel_shape", {R, S});
  Ints pads = ints(n, "pads", {0, 0, 0, 0});
  const std::string auto_pad = str_attr(n, "auto_pad", "NOTSET");
  c.dims = conv_dims_text(N, K, C, H, W, R, S, strides, pads, groups, dil);
  c.skip = conv_attr_problem({N, C, H, W, K, R, S}, kernel, strides, dil, pads, auto_pad, groups, w[1]);
  if (!c.skip.empty()) return;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    pads.assign(4, 0);
    same_pads(auto_pad, H, (R - 1) * dil[0] + 1, strides[0], &pads[0], &pads[2]);
    same_pads(auto_pad, W, (S - 1) * dil[1] + 1, strides[1], &pads[1], &pads[3]);
  } else if (auto_pad == "VALID") {
    pads.assign(4, 0);
  }
  c.dims = conv_dims_text(N, K, C, H, W, R, S, strides, pads, groups, dil);
  Shape s;
  s.N = N, s.K = K, s.C = C, s.H = H, s.W = W, s.R = R, s.S = S;
  s.stride_h = strides[0], s.stride_w = strides[1], s.dil_h = dil[0], s.dil_w = dil[1], s.groups = groups;
  s.pad_t = pads[0], s.pad_l = pads[1], s.pad_b = pads[2], s.pad_r = pads[3];
  try {
    validate_shape(s);
    c.shape = s;
  } catch (const Error& e) {
    c.skip = e.what();
  }
}

// One Conv node: its Shape, or the reason it has none.
OnnxConv read_conv(const onnx::NodeProto& n, const Graph& gr, const Tensors& t, bool* dynamic_batch) {
  OnnxConv c;
  // Names come from the model: escaped (text.h) before any message or report line holds them.
  c.node = n.name().empty() ? "" : escape_text(n.name());
  auto x = t.dims.find(n.input(0)), w = t.dims.find(n.input(1));
  // A Conv of another rank is skipped for that reason, not for unknown dims.
  const size_t rank = x != t.dims.end() ? x->second.size() : w != t.dims.end() ? w->second.size() : 4;
  if (rank != 4) {
    c.skip = fmt::format("a {}-D convolution (input of rank {}); convtune tunes 2-D convolutions only",
                         rank >= 2 ? rank - 2 : 0, rank);
    return c;
  }
  if (const std::string why = weight_not_constant(gr, n.input(1)); !why.empty()) {
    c.skip = why;
    return c;
  }
  // A dynamic batch alone is tuned as N=1 (a note says so); any other
  // unknown axis has no static shape.
  Dims xd = x != t.dims.end() ? x->second : Dims{};
  if (xd.size() == 4 && !xd[0] && xd[1] && xd[2] && xd[3]) *dynamic_batch = true, xd[0] = 1;
  if (xd.size() != 4 || !xd[1] || !xd[2] || !xd[3]) {
    c.skip = unknown_input_reason(gr, t, n.input(0));
    return c;
  }
  const auto wd = t.static_dims(n.input(1));
  if (!wd || wd->size() != 4) {
    c.skip = fmt::format("its weights '{}' have no known 4-D shape (not a 2-D convolution?)", escape_text(n.input(1)));
    return c;
  }
  read_conv_attrs(n, {*xd[0], *xd[1], *xd[2], *xd[3]}, *wd, c);
  return c;
}

// What is known of every tensor: ONNX's inferred dims, the initializers
// (dims, and values of small integer ones), then propagate().
Tensors known_tensors(const onnx::GraphProto& g) {
  Tensors t;
  for (const auto& v : g.input())
    if (auto d = dims_of(v.type())) t.dims[v.name()] = *d;
  for (const auto& v : g.value_info())
    if (auto d = dims_of(v.type())) t.dims[v.name()] = *d;
  for (const auto& init : g.initializer()) {
    t.dims[init.name()] = Dims(init.dims().begin(), init.dims().end());
    t.constants[init.name()] = &init;
    if (auto v = tensor_values<int64_t>(init)) t.values[init.name()] = *v;
  }
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() > 0)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) t.constants[n.output(0)] = &a.t();
  propagate(g, t);
  return t;
}

}  // namespace

bool onnx_supported() { return true; }

OnnxModel read_onnx(const std::string& path) {
  OnnxModel m;
  m.path = path;
  m.name = std::filesystem::path(path).stem().string();
  std::ifstream f(path, std::ios::binary);
  if (!f || std::filesystem::is_directory(path))
    throw Error(fmt::format("--onnx: cannot read '{}'; give the path of an .onnx model file", path));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&f) || !model.has_graph())
    throw Error(fmt::format("--onnx: '{}' is not an ONNX model (no protobuf ModelProto with a graph); export one "
                            "with torch.onnx.export (bench/models.py)",
                            path));
  if (const std::string stopped = infer_shapes(model); !stopped.empty()) m.notes.push_back(stopped);
  const onnx::GraphProto& g = model.graph();
  const Graph gr(g);
  const Tensors t = known_tensors(g);
  bool dynamic_batch = false;
  int index = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv") continue;
    OnnxConv c;
    if (n.input_size() < 2) {
      c.node = escape_text(n.name());
      c.skip = "it has no weight input; the model is invalid";
    } else {
      c = read_conv(n, gr, t, &dynamic_batch);
    }
    if (c.node.empty()) c.node = fmt::format("Conv #{}", index);
    ++index;
    m.convs.push_back(c);
  }
  if (m.convs.empty())
    throw Error(fmt::format("--onnx: '{}' has no Conv node; convtune tunes 2-D convolutions only", path));
  if (dynamic_batch) m.notes.push_back("the batch dimension is dynamic; tuned as N=1");
  return m;
}

std::vector<OnnxLayer> onnx_layers(const OnnxModel& m) {
  std::vector<OnnxLayer> v;
  for (const auto& c : m.convs) {
    if (!c.skip.empty()) continue;
    auto it = std::find_if(v.begin(), v.end(), [&](const OnnxLayer& l) { return l.shape.to_string() == c.shape.to_string(); });
    if (it == v.end()) {
      v.push_back({c.shape, 0, {}});
      it = v.end() - 1;
    }
    ++it->count;
    it->nodes.push_back(c.node);
  }
  std::stable_sort(v.begin(), v.end(), [](const OnnxLayer& a, const OnnxLayer& b) {
    return a.shape.flops() * a.count > b.shape.flops() * b.count;
  });
  for (size_t i = 0; i < v.size(); ++i) v[i].shape.name = fmt::format("{}-{}", m.name, i);
  return v;
}

}  // namespace convtune
