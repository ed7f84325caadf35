#pragma once
// The layer selection shared by tune, bench and export: exactly one of
// --layer, --network or --shape (repeatable).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "convtune/core/shape.h"

namespace convtune::cli {

struct ShapeArgs {
  std::string layer, network, onnx;  // --onnx: the model's distinct supported Conv shapes, as a network
  std::vector<std::string> shape;  // --shape may be repeated: the shapes in turn, as a network
};

/// Adds --layer, --network and --shape; `example` is a layer name for the help.
void add_shape_options(CLI::App* sub, ShapeArgs& a, const std::string& example);
/// The shapes chosen; throws Error unless exactly one option was given.
std::vector<Shape> selected_shapes(const ShapeArgs& a);
/// How many convolutions of the selection each shape stands for (an ONNX
/// model's merged nodes; 1 for the zoo and --shape), in selected_shapes order.
std::vector<int> selected_counts(const ShapeArgs& a);
/// Every convolution of the selection in network order, shapes repeating:
/// an ONNX model's supported Conv nodes in graph order (each as its named
/// distinct layer), else selected_shapes.
std::vector<Shape> selected_sequence(const ShapeArgs& a);
/// The selection as the options that give it again, for a child process.
std::vector<std::string> selection_options(const ShapeArgs& a);

}  // namespace convtune::cli
