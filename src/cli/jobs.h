#pragma once
// A selection of layers as jobs for an existing scheduler: `layers --list`
// prints one per line, `tune --job-index I` runs line I+1 (a Slurm array
// task, a GNU parallel job). Any selection (shape_args.h) works alike.
#include <cstdint>
#include <string>
#include <vector>

#include "convtune/core/shape.h"

namespace convtune::cli {

/// "<layer id>\t<shape>\n" per shape, in the selection's order; nothing else.
std::string job_lines(const std::vector<Shape>& shapes);
/// The shape of job `index` (0-based); throws Error naming the count when out of range.
Shape job_at(const std::vector<Shape>& shapes, int64_t index);

}  // namespace convtune::cli
