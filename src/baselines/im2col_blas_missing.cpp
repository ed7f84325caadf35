// Built when CMake did not find OpenBLAS.
#include "convtune/baselines/baseline.h"

namespace convtune {

std::unique_ptr<Baseline> make_im2col_blas(const ProblemData&, std::string* missing, int) {
  *missing = "OpenBLAS is not in this build; install it (sudo apt-get install libopenblas-dev) and rebuild convtune";
  return nullptr;
}

}  // namespace convtune
