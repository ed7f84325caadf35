#pragma once
// The measurement options tune and bench share (--cpu, --threads, -j,
// --min-repeat-ms, --repeat, --timeout, --check-points): declared once, with
// one help text, one default and one range check each.
#include <string>

#include <CLI/CLI.hpp>

#include "convtune/tune/tune.h"

namespace convtune::cli {

/// Adds the measurement options to `sub` in the order above, into `o`.
/// --threads is one count into o.threads (tune) when `threads_list` is null,
/// else a comma-separated list of counts ("1,2") into *threads_list (bench,
/// read with parse_threads_list); either way it defaults to every CPU this
/// process may use.
void add_measure_options(CLI::App* sub, TuneOptions& o, std::string* threads_list = nullptr);

}  // namespace convtune::cli
