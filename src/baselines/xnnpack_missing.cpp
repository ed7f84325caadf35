// Built when CMake did not find XNNPACK.
#include "convtune/baselines/baseline.h"

namespace convtune {

std::unique_ptr<Baseline> make_xnnpack(const ProblemData&, std::string* missing, int) {
  *missing = "XNNPACK is not in this build; install it (sudo apt-get install libxnnpack-dev libpthreadpool-dev) and "
             "rebuild convtune";
  return nullptr;
}

}  // namespace convtune
