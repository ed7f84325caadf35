// `convtune export`: the tuned layers (--layer, --network, --shape) as one library.
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "option_checks.h"
#include "shape_args.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/machine.h"
#include "convtune/library/export.h"

namespace convtune::cli {

namespace {

struct ExportArgs {
  ExportOptions opt;
  ShapeArgs which;
  std::string epilogue = "none";
};

}  // namespace

Runner setup_export(CLI::App* sub) {
  auto a = std::make_shared<ExportArgs>();
  ExportOptions& o = a->opt;
  add_shape_options(sub, a->which, "resnet18-12");
  sub->add_option("--out", o.out_dir, "directory for lib<name>.a, <name>.h, <name>.pc and <name>Config.cmake")
      ->required();
  sub->add_option("--name", o.name,
                  "the library's name, a C identifier prefixing every symbol (default: the network's, or the layer's)");
  sub->add_option("--logs", o.logs_root,
                  "read ROOT/<layer>/log.jsonl (as tune --network --out ROOT and bench/batch.py write them) instead "
                  "of each layer's default tune directory");
  o.threads = available_cpus();
  sub->add_option("--threads", o.threads,
                  "the --threads the layers were tuned with: picks the default tune directory, convtune-out/<layer>"
                  "[-t<N>] (default: every CPU this process may use, as tune)")
      ->capture_default_str()
      ->check(threads_check());
  sub->add_option("--epilogue", a->epilogue,
                  epilogue_help() + "; export takes the logs tuned with it (by default e.g. "
                                    "convtune-out/<layer>-bias-relu[-t<N>]) and every kernel applies it")
      ->capture_default_str();
  sub->add_flag("--skip-untuned", o.skip_untuned, "leave out a layer without a correct kernel instead of failing");
  sub->add_flag("--any-machine", o.any_machine, "use logs although another machine measured them");
  sub->add_option("-j,--jobs", o.jobs, "parallel compilations (default: the cores but one)")->check(jobs_check());
  return [a, sub] {
    ExportOptions o = a->opt;
    o.shapes = selected_shapes(a->which);
    o.epilogue = parse_epilogue(a->epilogue);
    if (!sub->count("--name"))  // a model's library is named for its file, as its layers are
      o.name = default_library_name(
          !a->which.onnx.empty() ? std::filesystem::path(a->which.onnx).stem().string() : a->which.network, o.shapes);
    // With --logs the records say their own thread count unless --threads is given.
    if (!o.logs_root.empty() && !sub->count("--threads")) o.threads = 0;
    ExportResult r = run_export(o);
    std::fputs(export_summary(r).c_str(), stdout);
    return 0;
  };
}

}  // namespace convtune::cli
