// Built when CMake did not find LIBXSMM.
#include "convtune/baselines/baseline.h"

namespace convtune {

std::unique_ptr<Baseline> make_libxsmm(const ProblemData&, std::string* missing, int) {
  *missing = "LIBXSMM is not in this build; install it (sudo apt-get install libxsmm-dev) and rebuild convtune";
  return nullptr;
}

}  // namespace convtune
