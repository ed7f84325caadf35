// Built when CMake found no ONNX library (cmake/models.cmake): --onnx says
// what to install.
#include "convtune/core/error.h"
#include "convtune/models/onnx_model.h"

namespace convtune {

bool onnx_supported() { return false; }

OnnxModel read_onnx(const std::string&) {
  throw Error("this convtune was built without ONNX support; install libonnx-dev and libprotobuf-dev and rebuild "
              "(scripts/build.sh)");
}

std::vector<OnnxLayer> onnx_layers(const OnnxModel&) { return {}; }

}  // namespace convtune
