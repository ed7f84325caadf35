// Conv nodes of an ONNX model, read with the ONNX library (onnx_model.h).
// Shapes come from ONNX's own shape inference, so an inner Conv's input dims
// are those the model computes, not guessed here.
#include "convtune/models/onnx_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

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

std::vector<int64_t> ints(const onnx::NodeProto& n, const std::string& name, std::vector<int64_t> dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return dflt;
}

int64_t int_attr(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return dflt;
}

std::string str_attr(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.s();
  return dflt;
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

// The nearest node upstream of `tensor` (itself or an ancestor's producer)
// of a custom domain, whose outputs ONNX shape inference cannot know.
const onnx::NodeProto* custom_ancestor(const onnx::GraphProto& g, const std::string& tensor) {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) producer[o] = &n;
  std::vector<std::string> todo{tensor};
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (!seen.insert(t).second) continue;
    auto it = producer.find(t);
    if (it == producer.end()) continue;
    const onnx::NodeProto* p = it->second;
    if (!p->domain().empty() && p->domain() != "ai.onnx") return p;
    for (const auto& i : p->input()) todo.push_back(i);
  }
  return nullptr;
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
  for (auto& n : *g.mutable_node()) {
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
  std::map<std::string, Dims> known;  // tensor name -> dims
  for (const auto& v : g.input())
    if (auto d = dims_of(v.type())) known[v.name()] = *d;
  for (const auto& v : g.value_info())
    if (auto d = dims_of(v.type())) known[v.name()] = *d;
  for (const auto& t : g.initializer()) {
    Dims d;
    for (int64_t x : t.dims()) d.push_back(x);
    known[t.name()] = d;
  }

  bool dynamic_batch = false;
  int index = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv") continue;
    OnnxConv c;
    // Names come from the model: escaped (text.h) before any message or report line holds them.
    c.node = n.name().empty() ? fmt::format("Conv #{}", index) : escape_text(n.name());
    ++index;
    if (n.input_size() < 2) throw Error(fmt::format("--onnx: '{}': node {} has no weight input", path, c.node));
    auto x = known.find(n.input(0)), w = known.find(n.input(1));
    // A Conv of another rank is skipped for that reason, not for unknown dims.
    const size_t rank = x != known.end() ? x->second.size() : w != known.end() ? w->second.size() : 4;
    if (rank != 4) {
      c.skip = fmt::format("a {}-D convolution (input of rank {}); convtune tunes 2-D convolutions only",
                           rank >= 2 ? rank - 2 : 0, rank);
      m.convs.push_back(c);
      continue;
    }
    if (x == known.end() || x->second.size() != 4 || !x->second[1] || !x->second[2] || !x->second[3]) {
      // Behind an op ONNX does not know (a custom domain) the dims are
      // unknown for that reason: skip the node, keep the rest of the model.
      if (const onnx::NodeProto* custom = custom_ancestor(g, n.input(0))) {
        c.skip = fmt::format("its input '{}' has no inferred shape: it comes after node {} (op {} of the custom "
                             "domain '{}'), which ONNX shape inference does not know",
                             escape_text(n.input(0)),
                             escape_text(custom->name().empty() ? custom->op_type() : custom->name()),
                             escape_text(custom->op_type()), escape_text(custom->domain()));
        m.convs.push_back(c);
        continue;
      }
      throw Error(fmt::format("--onnx: '{}': the input dims of Conv node {} ('{}') cannot be inferred; export the "
                              "model with fixed input sizes (torch.onnx.export with a concrete example input)",
                              path, c.node, escape_text(n.input(0))));
    }
    if (w == known.end() || w->second.size() != 4 || !w->second[0] || !w->second[1] || !w->second[2] ||
        !w->second[3]) {
      c.skip = fmt::format("its weights '{}' have no known 4-D shape (not a 2-D convolution?)",
                           escape_text(n.input(1)));
      m.convs.push_back(c);
      continue;
    }
    const Dims& xd = x->second;
    const Dims& wd = w->second;
    if (!xd[0]) dynamic_batch = true;
    const int64_t N = xd[0].value_or(1), C = *xd[1], H = *xd[2], W = *xd[3];
    const int64_t K = *wd[0], R = *wd[2], S = *wd[3];
    const int64_t groups = int_attr(n, "group", 1);
    const std::vector<int64_t> strides = ints(n, "strides", {1, 1}), dil = ints(n, "dilations", {1, 1});
    const std::vector<int64_t> kernel = ints(n, "kernel_shape", {R, S});
    std::vector<int64_t> pads = ints(n, "pads", {0, 0, 0, 0});
    const std::string auto_pad = str_attr(n, "auto_pad", "NOTSET");
    c.dims = fmt::format("N={} K={} C={} H={} W={} R={} S={} strides={} pads={} groups={} dilations={}", N, K, C, H, W,
                         R, S, join(strides), join(pads), groups, join(dil));
    // Every repeated attribute's length first (a 2-D Conv has 2 of each, 4
    // pads), then its values: nothing below indexes past them.
    auto length = [&](const char* name, const std::vector<int64_t>& v, size_t want) {
      return fmt::format("{}=[{}] has {} value{}; a 2-D Conv has {}", name, join(v), v.size(), v.size() == 1 ? "" : "s",
                         want);
    };
    // Bounds before any arithmetic on them (no overflow on a hostile model).
    constexpr int64_t kMost = int64_t(1) << 24;
    auto positive = [&](const std::vector<int64_t>& v, int64_t least) {
      return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e >= least && e <= kMost; });
    };
    if (!positive({N, C, H, W, K, R, S}, 1))
      c.skip = fmt::format("dims N={} C={} H={} W={} K={} R={} S={} are not all in [1, {}]; the model is invalid", N,
                           C, H, W, K, R, S, kMost);
    else if (kernel.size() != 2)
      c.skip = length("kernel_shape", kernel, 2);
    else if (strides.size() != 2)
      c.skip = length("strides", strides, 2);
    else if (dil.size() != 2)
      c.skip = length("dilations", dil, 2);
    else if (pads.size() != 4 && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
      c.skip = length("pads", pads, 4);
    else if (kernel[0] != R || kernel[1] != S)
      c.skip = fmt::format("kernel_shape={} differs from the weights' {},{}; the model is inconsistent", join(kernel),
                           R, S);
    else if (!positive(strides, 1) || !positive(dil, 1) || !positive(pads, 0))
      c.skip = fmt::format("strides={} dilations={} pads={}: strides and dilations must be at least 1, pads at least "
                           "0; the model is invalid",
                           join(strides), join(dil), join(pads));
    if (c.skip.empty()) {
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        pads.assign(4, 0);
        same_pads(auto_pad, H, (R - 1) * dil[0] + 1, strides[0], &pads[0], &pads[2]);
        same_pads(auto_pad, W, (S - 1) * dil[1] + 1, strides[1], &pads[1], &pads[3]);
      } else if (auto_pad == "VALID") {
        pads.assign(4, 0);
      }
      c.dims = fmt::format("N={} K={} C={} H={} W={} R={} S={} strides={} pads={} groups={} dilations={}", N, K, C, H,
                           W, R, S, join(strides), join(pads), groups, join(dil));
    }
    if (c.skip.empty()) {
      if (groups != 1)
        c.skip = fmt::format("groups={}: grouped convolutions are not supported yet; only groups=1", groups);
      else if (dil[0] != 1 || dil[1] != 1)
        c.skip = fmt::format("dilations={}: dilated convolutions are not supported yet; only 1,1", join(dil));
      else if (strides[0] != strides[1])
        c.skip = fmt::format("strides={}: unequal strides are not supported yet; only equal ones", join(strides));
      else if (std::count(pads.begin(), pads.end(), pads[0]) != 4)
        c.skip = fmt::format("pads={}: unequal or asymmetric pads are not supported yet; only four equal ones",
                             join(pads));
      else if (wd[1] != C)
        c.skip = fmt::format("weights have {} input channels, the input {}", *wd[1], C);
    }
    if (c.skip.empty()) {
      Shape s;
      s.N = N, s.K = K, s.C = C, s.H = H, s.W = W, s.R = R, s.S = S, s.set_stride(strides[0]), s.set_pad(pads[0]);
      try {
        validate_shape(s);
        c.shape = s;
      } catch (const Error& e) {
        c.skip = e.what();
      }
    }
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
