#include "shape_args.h"

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/models/onnx_model.h"

namespace convtune::cli {

void add_shape_options(CLI::App* sub, ShapeArgs& a, const std::string& example) {
  sub->add_option("--layer", a.layer, "a zoo layer, e.g. " + example + " (see 'convtune layers')");
  sub->add_option("--network", a.network, "every layer of a zoo network in turn: resnet18, yolo9000");
  sub->add_option("--shape", a.shape,
                  "an ad-hoc shape: \"K=512,C=256,H=34,R=3\" (N,W,S,stride,pad optional); repeat it for several, "
                  "taken in turn as a network");
  sub->add_option("--onnx", a.onnx,
                  "an ONNX model: its distinct supported Conv shapes, most FLOPs first, as a network "
                  "(see 'convtune layers --onnx')");
}

std::vector<Shape> selected_shapes(const ShapeArgs& a) {
  int given = !a.layer.empty() + !a.network.empty() + !a.shape.empty() + !a.onnx.empty();
  if (given != 1)
    throw Error("give exactly one of --layer NAME, --network NAME, --shape \"K=..,C=..,H=..,R=..\" or --onnx MODEL");
  if (!a.onnx.empty()) {
    std::vector<Shape> v;
    for (const auto& l : onnx_layers(read_onnx(a.onnx))) v.push_back(l.shape);
    if (v.empty())
      throw Error(fmt::format("--onnx: '{}' has no Conv node convtune supports; 'convtune layers --onnx {}' says why",
                              a.onnx, a.onnx));
    return v;
  }
  if (!a.layer.empty()) return {zoo_layer(a.layer)};
  if (!a.shape.empty()) {
    std::vector<Shape> v;
    for (const auto& text : a.shape) v.push_back(parse_shape(text));
    return v;
  }
  return zoo_network(a.network).layers;
}

std::vector<int> selected_counts(const ShapeArgs& a) {
  if (a.onnx.empty()) return std::vector<int>(selected_shapes(a).size(), 1);
  std::vector<int> v;
  for (const auto& l : onnx_layers(read_onnx(a.onnx))) v.push_back(l.count);
  return v;
}

std::vector<Shape> selected_sequence(const ShapeArgs& a) {
  if (a.onnx.empty()) return selected_shapes(a);
  const OnnxModel m = read_onnx(a.onnx);
  const std::vector<OnnxLayer> layers = onnx_layers(m);
  std::vector<Shape> v;
  for (const auto& c : m.convs) {
    if (!c.skip.empty()) continue;
    for (const auto& l : layers)
      if (l.shape.to_string() == c.shape.to_string()) v.push_back(l.shape);
  }
  if (v.empty()) return selected_shapes(a);  // its one-line error
  return v;
}

std::vector<std::string> selection_options(const ShapeArgs& a) {
  if (!a.layer.empty()) return {"--layer", a.layer};
  if (!a.network.empty()) return {"--network", a.network};
  if (!a.onnx.empty()) return {"--onnx", a.onnx};
  std::vector<std::string> v;
  for (const auto& text : a.shape) v.insert(v.end(), {"--shape", text});
  return v;
}

}  // namespace convtune::cli
