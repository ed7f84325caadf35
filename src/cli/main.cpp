// convtune: an autotuner for CPU 2D convolutions (paper 000).
#include <cstdio>
#include <map>
#include <memory>

#include "commands.h"
#include "convtune/core/error.h"

namespace convtune::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"profile", "offline stage: measure the microkernel space and write a class table", setup_profile},
      {"tune", "online stage: search the tiling space for one layer or network, keep the best kernel", setup_tune},
      {"bench", "compare convtune's best kernel for a layer with oneDNN and im2col+OpenBLAS on one core", setup_bench},
      {"table", "summarise a class table (the shipped one, or --table FILE)", setup_table},
      {"layers", "list the layer zoo (networks and their convolution shapes)", setup_layers},
  };
  return table;
}

}  // namespace convtune::cli

int main(int argc, char** argv) {
  using namespace convtune::cli;
  CLI::App app{"convtune " CONVTUNE_VERSION
               ": autotuner for CPU 2D convolutions (offline microkernel profiling, "
               "online search of a structured tiling space)"};
  app.set_version_flag("--version", "convtune " CONVTUNE_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, Runner> runners;
  for (const auto& c : commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners[sub] = c.setup(sub);
  }
  CLI::App* internal = app.add_subcommand("internal-onednn", "");
  runners[internal] = setup_internal_onednn(internal);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::fprintf(stderr, "convtune: error: %s; see 'convtune --help'\n", e.what());
      return 2;
    }
    return app.exit(e);
  }
  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
  } catch (const convtune::Error& e) {
    std::fprintf(stderr, "convtune: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
