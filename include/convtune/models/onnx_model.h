#pragma once
// Convolutions of an ONNX model (issue 13): every Conv node with its full
// shape, whether convtune supports it (and why not), and the distinct
// supported shapes a tune covers. Read with the ONNX library (Debian
// libonnx-dev); a convtune built without it refuses --onnx in one line.
#include <string>
#include <vector>

#include "convtune/core/shape.h"

namespace convtune {

struct OnnxConv {
  std::string node;      // the node's name (or "Conv #i" when it has none)
  std::string dims;      // "N=1 K=64 C=3 H=224 W=224 R=7 S=7 strides=2,2 pads=3,3,3,3 groups=1 dilations=1,1"
  Shape shape;           // when supported: strides, pads, dilations and groups per axis as the node has them
  std::string skip;      // why convtune cannot tune it; "" when supported
};

struct OnnxModel {
  std::string path, name;             // name: the file's stem, the layers' prefix
  std::vector<OnnxConv> convs;        // in graph order
  std::vector<std::string> notes;     // e.g. a dynamic batch taken as N=1
};

/// One distinct supported shape of a model: named <model>-<i>, most FLOPs
/// (times count) first, ties in graph order.
struct OnnxLayer {
  Shape shape;
  int count = 0;                      // Conv nodes of this shape
  std::vector<std::string> nodes;
};

/// Whether this convtune reads ONNX models.
bool onnx_supported();
/// Reads the model and its Conv nodes: input dims from ONNX shape inference,
/// then from the reader's own propagation of static shapes where inference
/// stops (Slice, Split, Resize bounds computed in the graph). A node that
/// cannot be a shape (another rank, weights not constant, no static input
/// dims, invalid attributes) is skipped with its reason. Throws Error in one
/// line for a missing file, a file that is not an ONNX model or a model
/// without Conv nodes.
OnnxModel read_onnx(const std::string& path);
/// The distinct supported shapes, named, most FLOPs first.
std::vector<OnnxLayer> onnx_layers(const OnnxModel& m);

}  // namespace convtune

namespace convtune {

/// `convtune layers --onnx`: the distinct supported shapes (with the count of
/// nodes each stands for and its first node), one line per skipped node with
/// its reason, the notes, and a summary line.
std::string onnx_report(const OnnxModel& m);

/// The `layers` tables' columns K to MFLOP (no layer name), the header first,
/// then one row per shape: stride "2" or "2x1" (h x w), pad "1" or "0,1,1,2"
/// (top, left, bottom, right; the column as wide as its longest entry), dil
/// "1" or "2x1", groups. Plain shapes read as they always have, two columns
/// (dil, groups) added.
std::vector<std::string> shape_columns(const std::vector<Shape>& shapes);

}  // namespace convtune
