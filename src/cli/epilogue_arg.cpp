// --epilogue of tune, bench and export (issue 13); parse_epilogue checks the value.
#include <fmt/format.h>

#include "commands.h"
#include "convtune/core/epilogue.h"

namespace convtune::cli {

std::string epilogue_help() {
  return fmt::format("fused after the convolution, before the store: {} (bias [K]; add: a residual tensor "
                     "[N][Ho][Wo][K])",
                     fmt::join(epilogue_names(), " | "));
}

}  // namespace convtune::cli
