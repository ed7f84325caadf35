// `convtune layers --onnx`'s text (onnx_model.h).
#include <fmt/format.h>

#include "convtune/models/onnx_model.h"

namespace convtune {

std::string onnx_report(const OnnxModel& m) {
  const std::vector<OnnxLayer> layers = onnx_layers(m);
  std::string o = fmt::format("{:<16} {:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>3} {:>4} {:>4} {:>9} {:>5}  {}\n",
                              "layer", "K", "C", "H", "W", "R", "S", "stride", "pad", "Ho", "Wo", "MFLOP", "count",
                              "nodes");
  for (const auto& l : layers) {
    const Shape& s = l.shape;
    o += fmt::format("{:<16} {:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>3} {:>4} {:>4} {:>9.1f} {:>5}  {}{}\n", s.name,
                     s.K, s.C, s.H, s.W, s.R, s.S, s.stride(), s.pad(), s.Ho(), s.Wo(), s.flops() * 1e-6, l.count,
                     l.nodes[0], l.nodes.size() > 1 ? fmt::format(" (+{} more)", l.nodes.size() - 1) : "");
    if (s.N != 1) o += fmt::format("{:<16} N={}\n", "", s.N);
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
