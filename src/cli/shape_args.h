#pragma once
// The layer selection shared by tune and bench: exactly one of --layer,
// --network or --shape.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "convtune/core/shape.h"

namespace convtune::cli {

struct ShapeArgs {
  std::string layer, network, shape;
};

/// Adds --layer, --network and --shape; `example` is a layer name for the help.
void add_shape_options(CLI::App* sub, ShapeArgs& a, const std::string& example);
/// The shapes chosen; throws Error unless exactly one option was given.
std::vector<Shape> selected_shapes(const ShapeArgs& a);

}  // namespace convtune::cli
