# Optional model import: ONNX (Debian libonnx-dev + libprotobuf-dev) for
# --onnx. Without it the stub is built and --onnx says what to install
# (cmake/optional.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/optional.cmake)
option(CONVTUNE_WITH_ONNX "Read ONNX models (--onnx) when the ONNX library is found" ON)
set(CT_MODEL_SOURCES)
if(CONVTUNE_WITH_ONNX)
  find_package(ONNX CONFIG QUIET)
  find_package(Protobuf QUIET)
endif()
ct_optional_dependency(
  GROUP MODELS LABEL "ONNX models" HAVE CONVTUNE_HAVE_ONNX LIST CT_MODEL_SOURCES
  WHEN CONVTUNE_WITH_ONNX AND ONNX_FOUND AND TARGET onnx AND Protobuf_FOUND
  SHOW ONNX_DIR INSTALL libonnx-dev libprotobuf-dev
  SOURCES src/models/onnx_model.cpp src/models/onnx_report.cpp
  MISSING src/models/onnx_model_missing.cpp src/models/onnx_report.cpp
  LIBS onnx onnx_proto protobuf::libprotobuf)
# benchdnn's shape lists (--benchdnn) are text: always built.
list(APPEND CT_MODEL_SOURCES src/models/benchdnn.cpp)

function(ct_use_models target)
  ct_use_optional(${target} MODELS)
endfunction()
