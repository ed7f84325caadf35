// --arch: given, or the best ISA this CPU runs, said on stderr (issue 6).
#include <fmt/format.h>

#include "commands.h"
#include "convtune/core/isa.h"

namespace convtune::cli {

std::string arch_help() {
  return fmt::format("instruction set: {} (default: the best this CPU supports)", fmt::join(known_isas(), ", "));
}

std::string best_arch(std::string* note) {
  std::string isa = best_isa();
  *note = fmt::format("--arch not given; using {}, the best ISA this CPU supports", isa);
  return isa;
}

}  // namespace convtune::cli
