#include "shape_args.h"

#include "convtune/core/error.h"

namespace convtune::cli {

void add_shape_options(CLI::App* sub, ShapeArgs& a, const std::string& example) {
  sub->add_option("--layer", a.layer, "a zoo layer, e.g. " + example + " (see 'convtune layers')");
  sub->add_option("--network", a.network, "every layer of a zoo network in turn: resnet18, yolo9000");
  sub->add_option("--shape", a.shape,
                  "an ad-hoc shape: \"K=512,C=256,H=34,R=3\" (N,W,S,stride,pad optional); repeat it for several, "
                  "taken in turn as a network");
}

std::vector<Shape> selected_shapes(const ShapeArgs& a) {
  int given = !a.layer.empty() + !a.network.empty() + !a.shape.empty();
  if (given != 1)
    throw Error("give exactly one of --layer NAME, --network NAME or --shape \"K=..,C=..,H=..,R=..\"");
  if (!a.layer.empty()) return {zoo_layer(a.layer)};
  if (!a.shape.empty()) {
    std::vector<Shape> v;
    for (const auto& text : a.shape) v.push_back(parse_shape(text));
    return v;
  }
  return zoo_network(a.network).layers;
}

}  // namespace convtune::cli
