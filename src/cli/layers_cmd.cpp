// `convtune layers`: the zoo, or any selection (--network, --layer, --shape,
// ...), one line per layer; --list: one job per line for a scheduler.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "jobs.h"
#include "shape_args.h"
#include "convtune/core/shape.h"
#include "convtune/models/benchdnn.h"
#include "convtune/models/onnx_model.h"
#include "convtune/tune/tune.h"

namespace convtune::cli {

Runner setup_layers(CLI::App* sub) {
  auto which = std::make_shared<ShapeArgs>();
  auto list = std::make_shared<bool>(false);
  auto benchdnn = std::make_shared<std::string>();
  add_shape_options(sub, *which, "yolo9000-12");
  sub->add_flag("--list", *list,
                "one job per line for a Slurm array or GNU parallel: layer id TAB shape, nothing else; "
                "'tune ... --job-index I' runs line I+1");
  sub->add_option("--benchdnn", *benchdnn,
                  "a oneDNN benchdnn conv shape list: each descriptor as a convtune shape at batch 1, or why not")
      ->excludes("--list", "--layer", "--network", "--shape", "--onnx");
  return [sub, which, list, benchdnn] {
    if (!benchdnn->empty()) {
      std::fputs(benchdnn_report(read_benchdnn(*benchdnn)).c_str(), stdout);
      return 0;
    }
    // Any selection option given (whichever shape_args offers): that
    // selection; none: the whole zoo.
    size_t given = 0;
    for (const CLI::Option* o : sub->get_options())
      if (o->get_name() != "--list" && o->get_name() != "--help") given += o->count();
    if (*list) {
      std::fputs(job_lines(selected_shapes(*which)).c_str(), stdout);  // no selection: its one-line error
      return 0;
    }
    if (!which->onnx.empty() && given == 1) {  // the model's table: counts, skipped nodes and why
      std::fputs(onnx_report(read_onnx(which->onnx)).c_str(), stdout);
      return 0;
    }
    std::vector<Shape> shapes;
    if (given) {
      shapes = selected_shapes(*which);
    } else {
      for (const auto& net : zoo()) shapes.insert(shapes.end(), net.layers.begin(), net.layers.end());
    }
    const std::vector<std::string> cols = shape_columns(shapes);
    std::fputs(fmt::format("{:<14} {}\n", "layer", cols[0]).c_str(), stdout);
    for (size_t i = 0; i < shapes.size(); ++i)
      std::fputs(fmt::format("{:<14} {}\n", layer_id(shapes[i]), cols[i + 1]).c_str(), stdout);
    return 0;
  };
}

}  // namespace convtune::cli
