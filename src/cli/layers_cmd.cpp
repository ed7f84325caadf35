// `convtune layers`: the zoo, one line per layer.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "convtune/core/shape.h"

namespace convtune::cli {

Runner setup_layers(CLI::App* sub) {
  auto network = std::make_shared<std::string>();
  sub->add_option("--network", *network, "only this network");
  return [network] {
    std::fputs(fmt::format("{:<14} {:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>3} {:>4} {:>4} {:>9}\n",
                           "layer", "K", "C", "H", "W", "R", "S", "stride", "pad", "Ho", "Wo", "MFLOP")
                   .c_str(),
               stdout);
    for (const auto& net : zoo()) {
      if (!network->empty() && net.name != *network) continue;
      for (const auto& s : net.layers)
        std::fputs(fmt::format("{:<14} {:>6} {:>5} {:>4} {:>4} {:>2} {:>2} {:>6} {:>3} {:>4} {:>4} {:>9.1f}\n",
                               s.name, s.K, s.C, s.H, s.W, s.R, s.S, s.stride, s.pad, s.Ho(), s.Wo(),
                               s.flops() * 1e-6)
                       .c_str(),
                   stdout);
    }
    if (!network->empty()) zoo_network(*network);  // unknown name -> clear error
    return 0;
  };
}

}  // namespace convtune::cli
