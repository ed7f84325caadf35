// `convtune layers --onnx`'s text (onnx_model.h), and the shape columns
// every `layers` table prints.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convtune/models/onnx_model.h"

namespace convtune {

namespace {

// One axis pair as "2" when equal, "2x1" (h x w) when not.
std::string pair_text(int64_t h, int64_t w) { return h == w ? std::to_string(h) : fmt::format("{}x{}", h, w); }

std::string pad_text(const Shape& s) {
  if (s.pad_t == s.pad_l && s.pad_t == s.pad_b && s.pad_t == s.pad_r) return std::to_string(s.pad_t);
  return fmt::format("{},{},{},{}", s.pad_t, s.pad_l, s.pad_b, s.pad_r);
}

}  // namespace

std::vector<std::string> shape_columns(const std::vector<Shape>& shapes) {
  size_t pw = 3;  // "pad"
  for (const auto& s : shapes) pw = std::max(pw, pad_text(s).size());
  std::vector<std::string> v{fmt::format("{:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>{}} {:>3} {:>6} {:>4} {:>4} "
                                         "{:>9}",
                                         "K", "C", "H", "W", "R", "S", "stride", "pad", pw, "dil", "groups", "Ho", "Wo",
                                         "MFLOP")};
  for (const auto& s : shapes)
    v.push_back(fmt::format("{:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>{}} {:>3} {:>6} {:>4} {:>4} {:>9.1f}", s.K,
                            s.C, s.H, s.W, s.R, s.S, pair_text(s.stride_h, s.stride_w), pad_text(s), pw,
                            pair_text(s.dil_h, s.dil_w), s.groups, s.Ho(), s.Wo(), s.flops() * 1e-6));
  return v;
}

std::string onnx_report(const OnnxModel& m) {
  const std::vector<OnnxLayer> layers = onnx_layers(m);
  std::vector<Shape> shapes;
  for (const auto& l : layers) shapes.push_back(l.shape);
  const std::vector<std::string> cols = shape_columns(shapes);
  std::string o = fmt::format("{:<16} {} {:>5}  {}\n", "layer", cols[0], "count", "nodes");
  for (size_t i = 0; i < layers.size(); ++i) {
    const OnnxLayer& l = layers[i];
    o += fmt::format("{:<16} {} {:>5}  {}{}\n", l.shape.name, cols[i + 1], l.count, l.nodes[0],
                     l.nodes.size() > 1 ? fmt::format(" (+{} more)", l.nodes.size() - 1) : "");
    if (l.shape.N != 1) o += fmt::format("{:<16} N={}\n", "", l.shape.N);
  }
  size_t skipped = 0;
  for (const auto& c : m.convs)
    if (!c.skip.empty()) {
      ++skipped;
      o += c.dims.empty() ? fmt::format("skipped {}: {}\n", c.node, c.skip)
                          : fmt::format("skipped {} ({}): {}\n", c.node, c.dims, c.skip);
    }
  for (const auto& n : m.notes) o += "note: " + n + "\n";
  o += fmt::format("{}: {} Conv node{}, {} supported in {} distinct shape{}, {} skipped\n", m.name, m.convs.size(),
                   m.convs.size() == 1 ? "" : "s", m.convs.size() - skipped, layers.size(),
                   layers.size() == 1 ? "" : "s", skipped);
  return o;
}

}  // namespace convtune
