// Built when CMake did not find oneDNN.
#include "convtune/baselines/baseline.h"

namespace convtune {

std::string onednn_missing() {
  return "oneDNN is not in this build; install it (sudo apt-get install libdnnl-dev) and rebuild convtune";
}

std::unique_ptr<Baseline> make_onednn(const ProblemData&, std::string* missing, int) {
  *missing = onednn_missing();
  return nullptr;
}

}  // namespace convtune
