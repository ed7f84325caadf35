#pragma once
// The layer selection shared by tune, bench and export: exactly one of
// --layer, --network or --shape (repeatable).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "convtune/core/shape.h"

namespace convtune::cli {

struct ShapeArgs {
  std::string layer, network;
  std::vector<std::string> shape;  // --shape may be repeated: the shapes in turn, as a network
};

/// Adds --layer, --network and --shape; `example` is a layer name for the help.
void add_shape_options(CLI::App* sub, ShapeArgs& a, const std::string& example);
/// The shapes chosen; throws Error unless exactly one option was given.
std::vector<Shape> selected_shapes(const ShapeArgs& a);

}  // namespace convtune::cli
