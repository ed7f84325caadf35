// `convtune space`: the search space tune would explore, without measuring.
#include <cstdio>

#include "commands.h"
#include "option_checks.h"
#include "shape_args.h"
#include "convtune/core/isa.h"
#include "convtune/offline/class_table.h"
#include "convtune/space/space.h"
#include "convtune/space/space_report.h"
#include "convtune/tune/tune.h"

namespace convtune::cli {

Runner setup_space(CLI::App* sub) {
  struct Args {
    ShapeArgs which;
    std::string isa, table;
    int threads = 1;
  };
  auto a = std::make_shared<Args>();
  add_shape_options(sub, a->which, "resnet18-12");
  sub->add_option("--arch", a->isa, arch_help());
  sub->add_option("--table", a->table, "class table (default: your profiled one, else the shipped one)");
  sub->add_option("--threads", a->threads, "threads to split the work over (any count: nothing runs)")
      ->capture_default_str()
      ->check(threads_check());
  return [a, sub] {
    const std::vector<Shape> shapes = selected_shapes(a->which);
    std::string note;
    const std::string isa_name = sub->count("--arch") ? a->isa : best_arch(&note);
    const Isa isa = load_isa(isa_name);
    const ClassTable table =
        load_table(isa.name, a->table.empty() ? std::nullopt : std::optional<std::string>(a->table));
    for (const Shape& s : shapes)
      std::fputs(space_report(build_space(s, table, isa.lanes, a->threads), layer_id(s), isa.name).c_str(), stdout);
    return 0;
  };
}

}  // namespace convtune::cli
