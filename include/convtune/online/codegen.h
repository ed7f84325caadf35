#pragma once
// Code generation for a whole convolution from a configuration (000 §3.4):
// the Lseq -> Seq rewrite, then one pass over the specifiers; microkernels
// come from ukernel_codegen (AVX-512, or any ISA described as data).
#include <string>

#include "convtune/online/config.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"

namespace convtune {

struct CodegenInput {
  Shape shape;
  Config config;              // must pass validate_config
  std::string function_name = "ct_conv";
  std::string provenance;     // e.g. class table origin and fingerprint, for the comment block
};

struct GeneratedKernel {
  std::string c_source;  // self-contained: includes its microkernels
  std::string header;    // prototype, layouts and size macros
};

/// Generates the C function
///   void NAME(const float *restrict input, const float *restrict weights,
///             float *restrict output);
/// input:   [N][H + 2*pad][W + 2*pad][C], zero-padded by the caller (NHWC)
/// weights: [R][S][C][Kp], Kp = K rounded up to the vector length, zero columns
/// output:  [N][Ho][Wo][Kp], overwritten (no need to clear it)
/// Throws Error if the configuration does not fit the shape.
GeneratedKernel generate_conv(const Isa& isa, const CodegenInput& in);

}  // namespace convtune
